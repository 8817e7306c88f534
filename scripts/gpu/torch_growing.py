"""Seed: growing input sizes. No leak, but each new batch size needs bigger blocks than the last, so
a caching allocator keeps reserving (fragmentation) while the tensors in use stay bounded.

The report's live bytes at the end and its peak must match PyTorch's own numbers for the mode.
"""
import torch

from scenario_support import finish, torch_memory_state

w1 = torch.randn(1024, 2048, device="cuda")
w2 = torch.randn(2048, 1024, device="cuda")
batch = 256
while batch <= 24576:
    x = torch.randn(batch, 1024, device="cuda")
    y = (x @ w1).relu() @ w2
    y.sum().item()
    del x, y
    batch = batch * 3 // 2

finish({"framework": "torch", "scenario": "growing", **torch_memory_state()})
