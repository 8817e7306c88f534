"""CuPy, one leak: with set_allocator(None) every array is its own cudaMalloc, so the marked line's
site must hold exactly the kept arrays. (Run under gpu-validate.sh, which skips it without CuPy.)
"""
import cupy

from scenario_support import finish, site

COUNT = 16
BYTES = 12582917  # distinctive: no other allocation of the run has this size

cupy.cuda.set_allocator(None)
cupy.cuda.set_pinned_memory_allocator(None)

kept = []
for i in range(COUNT):
    kept.append(cupy.empty(BYTES, dtype=cupy.uint8))  # LEAK: every array stays referenced
cupy.cuda.Device().synchronize()

finish({
    "framework": "cupy",
    "scenario": "leak",
    "mode": "allocator=None",
    "cupy": cupy.__version__,
    "expected_live": sum(a.nbytes for a in kept),
    "expected_live_source": "kept arrays",
    "leak": {**site("# LEAK"), "count": COUNT, "bytes_each": BYTES},
})
