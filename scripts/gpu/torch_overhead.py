"""Overhead: a small MLP training loop; prints ms per step for gpu-validate.sh to compare with and
without the preload. Same seed, same data: the final loss must not depend on the tracer.

It exits normally (unlike the leak scenarios), so the traced run also proves that the preload's
exit path neither hangs nor loses the end of the trace.
"""
import time

import torch
import torch.nn.functional as F

from scenario_support import finish, torch_mode

WARMUP = 20
STEPS = 200

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 1024)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device="cuda")
y = torch.randn(256, 1024, device="cuda")


def step():
    optimizer.zero_grad(set_to_none=True)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


for _ in range(WARMUP):
    step()
torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(STEPS):
    loss = step()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
# The rest of a long run, in which the steady steps reuse the caching allocator's segments unseen:
# what the first steps grew must be reported as its warm-up, not as a leak (check.py).
time.sleep(1.5)

finish({
    "framework": "torch",
    "scenario": "overhead",
    "mode": torch_mode(),
    "steps": STEPS,
    "ms_per_step": elapsed * 1000.0 / STEPS,
    "final_loss": loss.item(),
}, exit_now=False)
