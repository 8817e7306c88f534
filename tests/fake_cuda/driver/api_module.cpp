// Module loading and kernel launches, enough for programs built by nvcc and for cuBLAS: the runtime
// registers its fat binaries, loads them (lazily, as CUDA 12+ does) through cuLibraryLoadData or
// the runtime-interface export table, asks for kernels, functions and globals, and launches.
// Handles are small heap objects that live until the process ends (unloading forgets nothing a
// later lookup could still need). Globals are zeroed host buffers of kGlobalBytes.
#include "simple_call.hpp"

#include "modules.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

constexpr std::size_t kGlobalBytes = std::size_t{1} << 20;

struct Function {
    std::string name;
};
struct Library {
    std::mutex mutex;
    std::map<std::string, Function*> functions;
    std::map<std::string, void*> globals;
};

Library* new_library() {
    return new Library; // never freed: handles may be looked up after unload by cleanup code
}

Function* function_of(Library* lib, const char* name) {
    std::lock_guard lock(lib->mutex);
    Function*& f = lib->functions[name != nullptr ? name : ""];
    if (f == nullptr) f = new Function{name != nullptr ? name : ""};
    return f;
}

void* global_of(Library* lib, const char* name) {
    std::lock_guard lock(lib->mutex);
    void*& g = lib->globals[name != nullptr ? name : ""];
    if (g == nullptr) g = std::calloc(1, kGlobalBytes);
    return g;
}

Library* lib(CUlibrary l) {
    return reinterpret_cast<Library*>(l);
}
Library* lib(CUmodule m) {
    return reinterpret_cast<Library*>(m);
}

} // namespace

namespace fakecuda {

CUresult load_module(CUmodule* module, const void* image) noexcept {
    if (const CUresult rc = init_status(); rc != CUDA_SUCCESS) return rc;
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *module = reinterpret_cast<CUmodule>(new_library());
    return CUDA_SUCCESS;
}

} // namespace fakecuda

FAKECUDA_ACCEPT(cuModuleLoadData, (CUmodule * module, const void* image),
                { rc = fakecuda::load_module(module, image); })
FAKECUDA_ACCEPT(cuModuleLoadDataEx,
                (CUmodule * module, const void* image, unsigned int numOptions,
                 CUjit_option* options, void** optionValues),
                {
                    (void)numOptions;
                    (void)options;
                    (void)optionValues;
                    rc = fakecuda::load_module(module, image);
                })
FAKECUDA_ACCEPT(cuModuleLoadFatBinary, (CUmodule * module, const void* fatCubin),
                { rc = fakecuda::load_module(module, fatCubin); })
FAKECUDA_ACCEPT(cuModuleUnload, (CUmodule hmod), {
    if (hmod == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
})
FAKECUDA_ACCEPT(cuModuleGetFunction, (CUfunction * hfunc, CUmodule hmod, const char* name), {
    if (hfunc == nullptr || hmod == nullptr || name == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *hfunc = reinterpret_cast<CUfunction>(function_of(lib(hmod), name));
})
FAKECUDA_ACCEPT(cuModuleGetGlobal_v2,
                (CUdeviceptr * dptr, size_t* bytes, CUmodule hmod, const char* name), {
                    if (hmod == nullptr || name == nullptr) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        void* g = global_of(lib(hmod), name);
                        if (dptr != nullptr) *dptr = reinterpret_cast<CUdeviceptr>(g);
                        if (bytes != nullptr) *bytes = kGlobalBytes;
                    }
                })
FAKECUDA_ACCEPT(cuLibraryLoadData,
                (CUlibrary * library, const void* code, CUjit_option* jitOptions,
                 void** jitOptionsValues, unsigned int numJitOptions,
                 CUlibraryOption* libraryOptions, void** libraryOptionValues,
                 unsigned int numLibraryOptions),
                {
                    (void)jitOptions;
                    (void)jitOptionsValues;
                    (void)numJitOptions;
                    (void)libraryOptions;
                    (void)libraryOptionValues;
                    (void)numLibraryOptions;
                    if (library == nullptr || code == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *library = reinterpret_cast<CUlibrary>(new_library());
                })
FAKECUDA_ACCEPT(cuLibraryUnload, (CUlibrary library), {
    if (library == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
})
FAKECUDA_ACCEPT(cuLibraryGetKernel, (CUkernel * pKernel, CUlibrary library, const char* name), {
    if (pKernel == nullptr || library == nullptr || name == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pKernel = reinterpret_cast<CUkernel>(function_of(lib(library), name));
})
FAKECUDA_ACCEPT(cuLibraryGetModule, (CUmodule * pMod, CUlibrary library), {
    if (pMod == nullptr || library == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pMod = reinterpret_cast<CUmodule>(library);
})
FAKECUDA_ACCEPT(cuKernelGetFunction, (CUfunction * pFunc, CUkernel kernel), {
    if (pFunc == nullptr || kernel == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pFunc = reinterpret_cast<CUfunction>(kernel);
})
FAKECUDA_ACCEPT(cuLibraryGetGlobal,
                (CUdeviceptr * dptr, size_t* bytes, CUlibrary library, const char* name), {
                    if (library == nullptr || name == nullptr) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        void* g = global_of(lib(library), name);
                        if (dptr != nullptr) *dptr = reinterpret_cast<CUdeviceptr>(g);
                        if (bytes != nullptr) *bytes = kGlobalBytes;
                    }
                })
FAKECUDA_ACCEPT(cuLibraryGetManaged,
                (CUdeviceptr * dptr, size_t* bytes, CUlibrary library, const char* name), {
                    if (library == nullptr || name == nullptr) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        void* g = global_of(lib(library), name);
                        if (dptr != nullptr) *dptr = reinterpret_cast<CUdeviceptr>(g);
                        if (bytes != nullptr) *bytes = kGlobalBytes;
                    }
                })
FAKECUDA_ACCEPT(cuKernelGetAttribute,
                (int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev), {
                    (void)kernel;
                    (void)dev;
                    if (pi == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *pi = attrib == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024
                              : attrib == CU_FUNC_ATTRIBUTE_NUM_REGS            ? 32
                              : attrib == CU_FUNC_ATTRIBUTE_PTX_VERSION ||
                                      attrib == CU_FUNC_ATTRIBUTE_BINARY_VERSION
                                  ? 90
                                  : 0;
                })
FAKECUDA_ACCEPT(cuKernelSetAttribute,
                (CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev), {
                    (void)attrib;
                    (void)val;
                    (void)kernel;
                    (void)dev;
                })
FAKECUDA_ACCEPT(cuKernelSetCacheConfig, (CUkernel kernel, CUfunc_cache config, CUdevice dev), {
    (void)kernel;
    (void)config;
    (void)dev;
})
FAKECUDA_ACCEPT(cuKernelGetName, (const char** name, CUkernel hfunc), {
    if (name == nullptr || hfunc == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *name = reinterpret_cast<Function*>(hfunc)->name.c_str();
})
FAKECUDA_ACCEPT(cuFuncGetName, (const char** name, CUfunction hfunc), {
    if (name == nullptr || hfunc == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *name = reinterpret_cast<Function*>(hfunc)->name.c_str();
})
FAKECUDA_ACCEPT(cuFuncGetAttribute, (int* pi, CUfunction_attribute attrib, CUfunction hfunc), {
    (void)hfunc;
    if (pi == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pi =
            attrib == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024
            : attrib == CU_FUNC_ATTRIBUTE_NUM_REGS            ? 32
            : attrib == CU_FUNC_ATTRIBUTE_PTX_VERSION || attrib == CU_FUNC_ATTRIBUTE_BINARY_VERSION
                ? 90
                : 0;
})
FAKECUDA_ACCEPT(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value), {
    (void)hfunc;
    (void)attrib;
    (void)value;
})
FAKECUDA_ACCEPT(cuFuncSetCacheConfig, (CUfunction hfunc, CUfunc_cache config), {
    (void)hfunc;
    (void)config;
})
FAKECUDA_ACCEPT(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
                (int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize,
                 unsigned int flags),
                {
                    (void)func;
                    (void)dynamicSMemSize;
                    (void)flags;
                    if (numBlocks == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *numBlocks = blockSize > 0 ? 2048 / blockSize : 1;
                })
FAKECUDA_ACCEPT(cuOccupancyAvailableDynamicSMemPerBlock,
                (size_t * dynamicSmemSize, CUfunction func, int numBlocks, int blockSize), {
                    (void)func;
                    (void)numBlocks;
                    (void)blockSize;
                    if (dynamicSmemSize != nullptr) *dynamicSmemSize = 232448;
                })

#define FAKECUDA_LAUNCH_PARAMS                                                                     \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,            \
     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                       \
     unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra)
#define FAKECUDA_LAUNCH_BODY                                                                       \
    {                                                                                              \
        (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY,          \
            (void)blockDimZ, (void)sharedMemBytes, (void)hStream, (void)kernelParams, (void)extra; \
        if (f == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;                                          \
    }
FAKECUDA_ACCEPT(cuLaunchKernel, FAKECUDA_LAUNCH_PARAMS, FAKECUDA_LAUNCH_BODY)
FAKECUDA_ACCEPT(cuLaunchKernel_ptsz, FAKECUDA_LAUNCH_PARAMS, FAKECUDA_LAUNCH_BODY)
FAKECUDA_ACCEPT(cuLaunchCooperativeKernel,
                (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                 unsigned int sharedMemBytes, CUstream hStream, void** kernelParams),
                {
                    (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX,
                        (void)blockDimY, (void)blockDimZ, (void)sharedMemBytes, (void)hStream,
                        (void)kernelParams;
                    if (f == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
                })
FAKECUDA_ACCEPT(cuLaunchKernelEx,
                (const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra), {
                    (void)config;
                    (void)kernelParams;
                    (void)extra;
                    if (f == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
                })
FAKECUDA_ACCEPT(cuLaunchKernelEx_ptsz,
                (const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra), {
                    (void)config;
                    (void)kernelParams;
                    (void)extra;
                    if (f == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
                })
// Host functions run at once, on the calling thread: the fake's streams are always idle.
FAKECUDA_ACCEPT(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void* userData), {
    (void)hStream;
    if (fn == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        fn(userData);
})
FAKECUDA_ACCEPT(cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void* userData), {
    (void)hStream;
    if (fn == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        fn(userData);
})

// What cuBLASLt looks up by name on its libcuda handle (dlsym) besides the above.
FAKECUDA_ACCEPT(cuOccupancyMaxActiveBlocksPerMultiprocessor,
                (int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize), {
                    (void)func;
                    (void)dynamicSMemSize;
                    if (numBlocks == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *numBlocks = blockSize > 0 ? 2048 / blockSize : 1;
                })
// Tensor maps (TMA descriptors) are opaque to the program: any 128 bytes do.
FAKECUDA_ACCEPT(cuTensorMapEncodeTiled,
                (CUtensorMap * tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                 void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                 const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                 CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                 CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill),
                {
                    (void)tensorDataType, (void)tensorRank, (void)globalAddress, (void)globalDim,
                        (void)globalStrides, (void)boxDim, (void)elementStrides, (void)interleave,
                        (void)swizzle, (void)l2Promotion, (void)oobFill;
                    if (tensorMap == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        std::memset(tensorMap, 0, sizeof *tensorMap);
                })
FAKECUDA_ACCEPT(cuCtxPushCurrent, (CUcontext ctx), {
    const int device = fakecuda::device_of_context(ctx);
    if (device < 0)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else
        fakecuda::set_current_device(device);
})
FAKECUDA_ACCEPT(cuCtxPopCurrent, (CUcontext * pctx), {
    if (pctx != nullptr) *pctx = fakecuda::primary_context(fakecuda::current_device());
})
// JIT linking: the "linked image" is a few bytes any module loader of the fake accepts.
namespace {
char g_linked_image[16] = "fakecuda-linked";
}
FAKECUDA_ACCEPT(cuLinkCreate_v2,
                (unsigned int numOptions, CUjit_option* options, void** optionValues,
                 CUlinkState* stateOut),
                {
                    (void)numOptions;
                    (void)options;
                    (void)optionValues;
                    if (stateOut == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *stateOut = reinterpret_cast<CUlinkState>(new_library());
                })
FAKECUDA_ACCEPT(cuLinkAddData_v2,
                (CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                 unsigned int numOptions, CUjit_option* options, void** optionValues),
                {
                    (void)type, (void)data, (void)size, (void)name, (void)numOptions, (void)options,
                        (void)optionValues;
                    if (state == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
                })
FAKECUDA_ACCEPT(cuLinkAddFile_v2,
                (CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                 CUjit_option* options, void** optionValues),
                {
                    (void)type, (void)path, (void)numOptions, (void)options, (void)optionValues;
                    if (state == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
                })
FAKECUDA_ACCEPT(cuLinkComplete, (CUlinkState state, void** cubinOut, size_t* sizeOut), {
    if (state == nullptr) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    } else {
        if (cubinOut != nullptr) *cubinOut = g_linked_image;
        if (sizeOut != nullptr) *sizeOut = sizeof g_linked_image;
    }
})
FAKECUDA_ACCEPT(cuLinkDestroy, (CUlinkState state), {
    if (state == nullptr) rc = CUDA_ERROR_INVALID_HANDLE;
})
