"""Seed: a clean loop. Every step's tensors die with the step; only the weights and one scalar stay.

The report's live bytes at the end must match what PyTorch holds (see torch_memory_state), and its
peak must match PyTorch's own peak.
"""
import torch

from scenario_support import finish, torch_memory_state

STEPS = 50

w1 = torch.randn(1024, 4096, device="cuda")
w2 = torch.randn(4096, 1024, device="cuda")
total = torch.zeros((), device="cuda")
for step in range(STEPS):
    x = torch.randn(512, 1024, device="cuda")
    hidden = (x @ w1).relu()
    total += (hidden @ w2).mean()
    del x, hidden

total.item()
finish({"framework": "torch", "scenario": "clean-loop", **torch_memory_state()})
