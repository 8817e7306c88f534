"""JAX, one leak, with XLA_PYTHON_CLIENT_ALLOCATOR=platform (set by gpu-validate.sh before the
import): no preallocated arena, every buffer is its own driver allocation. XLA may round a buffer
up or allocate scratch of its own, so the checker compares loosely (see check.py).
"""
import jax
import jax.numpy as jnp

from scenario_support import finish, site

COUNT = 16
ELEMENTS = 3145733  # float32: 12582932 bytes, a size no other buffer of the run has

kept = []
for i in range(COUNT):
    kept.append(jnp.full((ELEMENTS,), i, dtype=jnp.float32))  # LEAK: every array stays referenced
jax.block_until_ready(kept)

finish({
    "framework": "jax",
    "scenario": "leak",
    "mode": "platform",
    "jax": jax.__version__,
    "backend": jax.default_backend(),
    "expected_live": sum(a.nbytes for a in jax.live_arrays()),
    "expected_live_source": "jax.live_arrays()",
    "leak": {**site("# LEAK"), "count": COUNT, "bytes_each": ELEMENTS * 4},
})
