"""What every framework scenario of gpu-validate.sh shares: finding its own marked lines, counting
the memory it holds, and handing its ground truth to the checker.

A scenario is run as `python3 SCENARIO.py TRUTH_JSON` under the preload. Its "end" is the moment it
wrote TRUTH_JSON: finish() then waits for the tracer's writer to flush and leaves with os._exit, so
interpreter teardown (which frees tensors in the per-tensor allocator modes) cannot move the
report's live bytes away from what the scenario measured. The report therefore says complete=false
for these runs; every block is still there (the writer seals every thread's chunk each flush).
"""
import gc
import json
import os
import sys
import time


def line_of(marker, path=None):
    """The number of the first line of `path` (default: the running script) that holds marker, so a
    scenario names its marked line before any later mention of the marker."""
    path = path or sys.argv[0]
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if marker in text:
                return number
    raise SystemExit(f"{path}: no line marked {marker!r}")


def site(marker):
    """The ground truth of a marked line: where the report must place the allocation."""
    return {"file": os.path.realpath(sys.argv[0]), "line": line_of(marker)}


def torch_mode():
    """Which PyTorch allocator mode this process runs under, decided as PyTorch decides it."""
    import torch

    if torch.cuda.get_allocator_backend() == "cudaMallocAsync":
        return "cudaMallocAsync"
    if os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING", "") not in ("", "0"):
        return "no-caching"
    if "expandable_segments:true" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "").lower():
        return "expandable"
    return "default"


def torch_live_tensor_bytes():
    """Bytes of the distinct CUDA storages of every tensor Python can reach (our own accounting)."""
    import torch

    storages = {}
    for obj in gc.get_objects():
        if isinstance(obj, torch.Tensor) and obj.is_cuda:
            s = obj.untyped_storage()
            storages[s.data_ptr()] = s.nbytes()
    return sum(storages.values())


def torch_memory_state():
    """What the report's device bytes must match in this mode, and PyTorch's own numbers.

    Caching modes (default, expandable): the driver sees segments, so the report's live bytes are
    torch.cuda.memory_reserved(). Per-tensor modes: the driver sees tensors, so they are
    memory_allocated(); without caching PyTorch keeps no statistics at all (memory_allocated() is 0),
    so the tensors we can reach stand in for it."""
    import torch

    torch.cuda.synchronize()
    mode = torch_mode()
    state = {
        "mode": mode,
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "live_tensor_bytes": torch_live_tensor_bytes(),
    }
    if mode in ("default", "expandable"):
        state.update(expected_live=state["memory_reserved"], expected_live_source="reserved",
                     expected_peak=state["max_memory_reserved"], expected_peak_source="max_reserved")
    elif mode == "cudaMallocAsync":
        state.update(expected_live=state["memory_allocated"], expected_live_source="allocated",
                     expected_peak=state["max_memory_allocated"],
                     expected_peak_source="max_allocated")
    else:
        state.update(expected_live=state["live_tensor_bytes"], expected_live_source="live tensors",
                     expected_peak=None, expected_peak_source="none without caching")
    return state


def flush_wait_s():
    """Two of the tracer's flush intervals, and never less than a quarter of a second."""
    try:
        flush_ms = int(os.environ.get("GPULEAK_FLUSH_MS", "50"))
    except ValueError:
        flush_ms = 50
    return max(0.25, 2 * flush_ms / 1000.0)


def finish(truth, exit_now=True):
    """Write the ground truth to the file named by argv[1]; then leave at once (see module doc)."""
    truth = dict(truth, pid=os.getpid(), python=sys.version.split()[0])
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    if not exit_now:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(flush_wait_s())
    os._exit(0)
