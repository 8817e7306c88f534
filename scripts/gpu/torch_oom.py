"""Seed: an out-of-memory error from a buffer 65 times a sixty-fourth of the device (so it can never
fit), after two live buffers, as tests/apps/scenario_oom.c does against the fake driver.

The report must hold the failed request, name this file's oversized line as its site, and say what
was live at that moment. With expandable segments PyTorch may refuse the request itself, before it
calls the driver; the checker then has nothing to compare and says so.
"""
import torch

from scenario_support import finish, site, torch_memory_state

_, total_bytes = torch.cuda.mem_get_info()
unit = total_bytes // 64

weights = torch.empty(20000002, dtype=torch.uint8, device="cuda")
kv_cache = torch.empty(8000008, dtype=torch.uint8, device="cuda")
before = torch_memory_state()

raised = False
try:
    batch = torch.empty(65 * unit, dtype=torch.uint8, device="cuda")  # OOM: never fits
except RuntimeError as error:
    # torch.OutOfMemoryError; without caching, a plain "CUDA error: out of memory" RuntimeError.
    if "out of memory" not in str(error).lower():
        raise
    raised = True

del kv_cache
finish({
    "framework": "torch",
    "scenario": "oom",
    **torch_memory_state(),
    "oom": {**site("# OOM"), "requested": 65 * unit, "raised": raised,
            "live_before": before["expected_live"],
            "live_before_source": before["expected_live_source"]},
})
