"""python_walk: the Python workload of scripts/bench.sh.

    python3 python_walk.py LIBCUDART DEPTH PAIRS

PAIRS cudaMalloc/cudaFree pairs through the fake runtime (loaded with ctypes) from DEPTH Python
frames (counted from the allocating function outward, <module> included). Prints one line like
alloc_loop: "mode=python depth=... pairs=... loop_cpu_ns=..." with the process's CPU time over the
loop (a tracer's own threads included). Run it under libgpuleak.so with GPULEAK_PYTHON=1 and =0:
the difference is what walking the Python stack costs.
"""
import ctypes
import sys
import time


def python_depth():
    frame, n = sys._getframe(1), 0
    while frame is not None:
        n, frame = n + 1, frame.f_back
    return n


def loop(cudart, pairs):
    ptr = ctypes.c_void_p()
    ref = ctypes.byref(ptr)
    malloc, free = cudart.cudaMalloc, cudart.cudaFree
    for _ in range(pairs):
        if malloc(ref, 256) != 0 or free(ptr) != 0:
            sys.exit("python_walk: cudaMalloc/cudaFree failed")


def descend(levels, cudart, pairs):
    if levels <= 0:
        loop(cudart, pairs)
    else:
        descend(levels - 1, cudart, pairs)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: python_walk.py LIBCUDART DEPTH PAIRS")
    cudart = ctypes.CDLL(sys.argv[1])
    depth, pairs = int(sys.argv[2]), int(sys.argv[3])
    sys.setrecursionlimit(max(1000, depth + 100))
    loop(cudart, 1)  # runtime and tracer start-up stay out of the measurement
    # loop's frame + (levels + 1) descend frames + main + <module> = depth
    levels = depth - python_depth() - 2
    start = time.process_time_ns()
    descend(max(levels, 0), cudart, pairs)
    print(f"mode=python depth={depth} pairs={pairs} loop_cpu_ns={time.process_time_ns() - start}")


if __name__ == "__main__":
    main()
