"""python_ctypes: interception path 2 from Python. ctypes.CDLL("libcuda.so.1") resolves
cuMemAlloc_v2 with dlsym, exactly like numba or a hand-written binding. Run with the fake libcuda's
directory on LD_LIBRARY_PATH; any python3 will do.

Ground truth (device 0, cuMemAlloc_v2):
  python_leak_first       9000009 dev leaked
  python_leak_second      9000019 dev leaked
  python_transient        9000029 dev freed with cuMemFree_v2
Totals: 3 allocations, 1 free. Live at end: 2 blocks, 18000028 bytes.
Device peak: 27000057 (all three at once).
"""
import ctypes
import sys

cuda = ctypes.CDLL("libcuda.so.1")
CUdeviceptr = ctypes.c_ulonglong


def check(result, what):
    if result != 0:
        sys.exit(f"python_ctypes: {what} returned {result}")


def allocate(size):
    ptr = CUdeviceptr(0)
    check(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size)), f"cuMemAlloc_v2({size})")
    return ptr


def python_leak_first():
    return allocate(9000009)


def python_leak_second():
    return allocate(9000019)


def python_transient():
    return allocate(9000029)


def expect(name, actual, expected):
    if actual != expected:
        sys.exit(f"python_ctypes: {name} is {actual}, expected {expected}")


def main():
    check(cuda.cuInit(0), "cuInit")
    kept = [python_leak_first(), python_leak_second()]
    transient = python_transient()
    check(cuda.cuMemFree_v2(transient), "cuMemFree_v2")

    cuda.fakecuda_calls.restype = ctypes.c_long
    cuda.fakecuda_device_used.restype = ctypes.c_ulonglong
    cuda.fakecuda_device_peak.restype = ctypes.c_ulonglong
    expect("cuMemAlloc_v2 calls", cuda.fakecuda_calls(b"cuMemAlloc_v2"), 3)
    expect("cuMemFree_v2 calls", cuda.fakecuda_calls(b"cuMemFree_v2"), 1)
    expect("device bytes in use", cuda.fakecuda_device_used(0), 18000028)
    expect("device peak", cuda.fakecuda_device_peak(0), 27000057)
    return kept


if __name__ == "__main__":
    main()
