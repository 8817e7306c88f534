"""Seed: gradients kept from step to step. backward() makes the gradients of CUDA tensors on the
autograd engine's own device thread, whose stacks hold no Python frame and none of the program's
code; zero_grad() sets every .grad to None, so each step's backward() makes new ones, and `kept`
holds them all.

The report must find that leak on the engine's thread and, in the per-tensor modes (every tensor a
driver allocation), time it by the training loop: growth per step = the parameters' bytes. Under
the caching allocator the training loop shows only its first steps, so the engine's own loop times
it (docs/loops-and-verdicts.md): there only the verdict and the bytes are checked.
"""
import torch

from scenario_support import finish, site, torch_memory_state

STEPS = 16

# 4099 and 1021: gradients whose sizes no other tensor of the run has.
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4099, bias=False), torch.nn.ReLU(), torch.nn.Linear(4099, 1021, bias=False)
).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device="cuda")
# Warm-up on its own lines: the first backward starts the engine's thread and cuBLAS's handles.
model(x).square().mean().backward()
optimizer.zero_grad(set_to_none=True)

kept = []
for step in range(STEPS):  # TRAINING LOOP
    optimizer.zero_grad(set_to_none=True)
    model(x).square().mean().backward()
    optimizer.step()
    kept.extend(p.grad for p in model.parameters())  # every step's gradients kept

finish({
    "framework": "torch",
    "scenario": "gradients",
    **torch_memory_state(),
    "gradients": {
        **site("# TRAINING LOOP"),
        "steps": STEPS,
        "bytes_per_step": sum(p.grad.untyped_storage().nbytes() for p in model.parameters()),
    },
})
