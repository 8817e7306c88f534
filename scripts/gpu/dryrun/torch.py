"""A stand-in for `torch`, ONLY for gpu-validate.sh --dry-run: just enough of the API the scenarios
use, every tensor one cudaMalloc (or cudaMallocAsync in that mode) through ctypes into whatever
libcudart.so.13 the loader finds, which in a dry run is the fake one of the test suite. It lets the
whole GPU path of the script (parallel cases, reports, checks, overhead) run where there is no GPU.
Numbers are not PyTorch's: no caching, so "reserved" is simply what is allocated.
"""
import ctypes
import os
import random
import sys
import types

__version__ = "0.0-dryrun"
version = types.SimpleNamespace(cuda="fake")
uint8 = "uint8"
float32 = "float32"
_ITEMSIZE = {uint8: 1, float32: 4}

_rt = ctypes.CDLL("libcudart.so.13")
_ASYNC = "backend:cudaMallocAsync" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
_live = {}  # pointer -> bytes
_peak = 0


class OutOfMemoryError(RuntimeError):
    pass


def _malloc(nbytes):
    global _peak
    p = ctypes.c_void_p()
    if _ASYNC:
        err = _rt.cudaMallocAsync(ctypes.byref(p), ctypes.c_size_t(nbytes), None)
    else:
        err = _rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(nbytes))
    if err == 2:  # cudaErrorMemoryAllocation
        raise OutOfMemoryError(f"CUDA out of memory (dry run): {nbytes} bytes do not fit")
    if err != 0:
        raise RuntimeError(f"dry run: cudaMalloc error {err}")
    _live[p.value] = nbytes
    _peak = max(_peak, sum(_live.values()))
    return p.value


def _free(ptr):
    if _live.pop(ptr, None) is not None:
        (_rt.cudaFreeAsync(ctypes.c_void_p(ptr), None) if _ASYNC else _rt.cudaFree(ctypes.c_void_p(ptr)))


class _Storage:
    _ptr = None

    def __init__(self, nbytes):
        self._nbytes = nbytes
        self._ptr = _malloc(max(nbytes, 1))

    def __del__(self):
        _free(self._ptr)

    def nbytes(self):
        return self._nbytes

    def data_ptr(self):
        return self._ptr


class Tensor:
    is_cuda = True

    def __init__(self, shape, dtype=float32, value=0.0):
        self.shape = tuple(shape)
        self.dtype = dtype
        n = 1
        for d in self.shape:
            n *= d
        self._storage = _Storage(n * _ITEMSIZE[dtype])
        self._value = value

    def untyped_storage(self):
        return self._storage

    def __matmul__(self, other):
        return Tensor(self.shape[:-1] + other.shape[-1:], value=self._value * other._value)

    def relu(self):
        return Tensor(self.shape, value=max(self._value, 0.0))

    def sum(self):
        return Tensor((), value=self._value)

    mean = sum

    def __iadd__(self, other):
        self._value += other._value
        return self

    def item(self):
        return self._value

    def backward(self):
        pass

    def cuda(self):
        return self


def _shape(args):
    return args[0] if len(args) == 1 and isinstance(args[0], tuple) else args


def randn(*shape, device=None, dtype=float32):
    return Tensor(_shape(shape), dtype, random.random())


def empty(*shape, dtype=float32, device=None):
    return Tensor(_shape(shape), dtype)


def zeros(*shape, device=None, dtype=float32):
    return Tensor(_shape(shape), dtype)


def manual_seed(seed):
    random.seed(seed)


def _mem_get_info():
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    _rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
    return free.value, total.value


cuda = types.SimpleNamespace(
    is_available=lambda: True,
    synchronize=lambda: _rt.cudaDeviceSynchronize(),
    get_allocator_backend=lambda: "cudaMallocAsync" if _ASYNC else "native",
    memory_allocated=lambda: sum(_live.values()),
    memory_reserved=lambda: sum(_live.values()),
    max_memory_allocated=lambda: _peak,
    max_memory_reserved=lambda: _peak,
    mem_get_info=_mem_get_info,
)


class _Linear:
    def __init__(self, n_in, n_out):
        self.weight = randn(n_in, n_out)

    def __call__(self, x):
        return x @ self.weight


class _ReLU:
    def __call__(self, x):
        return x.relu()


class _Sequential:
    def __init__(self, *layers):
        self.layers = layers

    def cuda(self):
        return self

    def parameters(self):
        return [layer.weight for layer in self.layers if hasattr(layer, "weight")]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class _Adam:
    def __init__(self, params, lr=1e-3):
        self.params = list(params)

    def zero_grad(self, set_to_none=True):
        pass

    def step(self):
        # Like the foreach optimizer: temporaries per parameter, freed at once.
        [empty(*p.shape) for p in self.params]


nn = types.ModuleType("torch.nn")
nn.Linear, nn.ReLU, nn.Sequential = _Linear, _ReLU, _Sequential
nn.functional = types.ModuleType("torch.nn.functional")
nn.functional.mse_loss = lambda a, b: Tensor((), value=abs(a.item() - b.item()))
optim = types.ModuleType("torch.optim")
optim.Adam = _Adam
sys.modules.update({"torch.nn": nn, "torch.nn.functional": nn.functional, "torch.optim": optim})
