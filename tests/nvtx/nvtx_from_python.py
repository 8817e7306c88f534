"""nvtx_from_python: NVTX ranges opened from Python through a compiled NVTX library, as
torch.cuda.nvtx.range_push does (here CUDA's libnvtx3interop, the NVTX3 API built as a shared
library, called with ctypes), around cudaMalloc calls of the fake runtime.

Usage: python3 nvtx_from_python.py NVTX_LIBRARY CUDART_LIBRARY

Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2): 5 ranges "iteration", each around one
leaking 1000001-byte allocation (python_keep_output_leak) and two empty ranges "forward".
Totals: 5 allocations, 0 frees. Live at end: 5000005 bytes. Pushes and pops answer
NVTX_NO_PUSH_POP_TRACKING (-2), as they do without a tool.
"""
import ctypes
import sys

NO_PUSH_POP_TRACKING = -2

nvtx = ctypes.CDLL(sys.argv[1])
cudart = ctypes.CDLL(sys.argv[2])
nvtx.nvtxRangePushA.argtypes = [ctypes.c_char_p]
nvtx.nvtxRangePushA.restype = ctypes.c_int
nvtx.nvtxRangePop.restype = ctypes.c_int


def check(value, expected, what):
    if value != expected:
        sys.exit(f"nvtx_from_python: {what} returned {value}, expected {expected}")


def range_push(message):
    check(nvtx.nvtxRangePushA(message.encode()), NO_PUSH_POP_TRACKING, f"nvtxRangePushA({message!r})")


def range_pop():
    check(nvtx.nvtxRangePop(), NO_PUSH_POP_TRACKING, "nvtxRangePop()")


def python_keep_output_leak():
    ptr = ctypes.c_void_p()
    check(cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(1000001)), 0, "cudaMalloc")
    return ptr


def train():
    outputs = []
    for _ in range(5):
        range_push("iteration")
        outputs.append(python_keep_output_leak())
        for _ in range(2):
            range_push("forward")
            range_pop()
        range_pop()
    return outputs


train()
