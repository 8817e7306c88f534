"""Seed: the classic training-loop leak, every step's output kept in a list (losses.append(output)).

The leaked tensor is created on the append line itself, so "the leaking line" is unambiguous: the
report must head its largest site with this file and that line. In the per-tensor modes each kept
output is one driver allocation, so the site's live count and bytes are exact.
"""
import torch

from scenario_support import finish, site, torch_memory_state

STEPS = 24

x = torch.randn(2048, 1024, device="cuda")
w = torch.randn(1024, 4099, device="cuda")  # 4099 columns: an output no other tensor matches
# Warm-up on its own line: the first matmul creates the cuBLAS handle and workspace.
(x @ w).sum().item()

losses = []
for step in range(STEPS):
    losses.append(x @ w)  # LEAK: every step's output stays referenced

finish({
    "framework": "torch",
    "scenario": "leak",
    **torch_memory_state(),
    "leak": {**site("# LEAK"), "count": STEPS, "bytes_each": losses[0].untyped_storage().nbytes()},
})
