// Module loading and kernel launches, enough for programs built by nvcc and for cuBLAS: the runtime
// registers its fat binaries, loads them (lazily, as CUDA 12+ does) through cuLibraryLoadData or
// the runtime-interface export table, asks for kernels, functions and globals, and launches.
// Handles are small heap objects that live until the process ends (unloading forgets nothing a
// later lookup could still need). Globals are zeroed host buffers of kGlobalBytes.
#include "simple_call.hpp"

#include "modules.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

constexpr std::size_t kGlobalBytes = std::size_t{1} << 20;

// The occupancy model of the 132-SM Hopper the device attributes describe (api_device_ext.cpp):
// per SM 2048 threads, 32 blocks, 233472 bytes of shared memory of which every block reserves
// 1024; a block may opt in to 232448 bytes of dynamic shared memory (48 KiB without opting in).
// Clusters are placed within one GPC; the SMs are split into 8 GPCs as on an H100 SXM (132 of
// the GH100's 144 SMs enabled). Portable clusters have at most 8 blocks, 16 with the
// non-portable-cluster-size attribute.
constexpr int kThreadsPerSm = 2048;
constexpr int kBlocksPerSm = 32;
constexpr int kSharedPerSm = 233472;
constexpr int kReservedSharedPerBlock = 1024;
constexpr int kMaxDynamicSharedOptIn = 232448;
constexpr int kDefaultDynamicShared = 49152;
constexpr int kGpcSms[] = {18, 18, 16, 16, 16, 16, 16, 16};
constexpr int kPortableClusterBlocks = 8;
constexpr int kNonPortableClusterBlocks = 16;

struct Library;
struct Function {
    std::string name;
    Library* library;
    // What cuFuncSetAttribute / cuKernelSetAttribute set and the occupancy model reads.
    std::atomic<int> max_dynamic_shared{kDefaultDynamicShared};
    std::atomic<int> non_portable_cluster{0};
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
    if (f == nullptr) f = new Function{name != nullptr ? name : "", lib};
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

// Blocks of `block_size` threads with `dynamic_shared` bytes each that one SM holds at once.
int blocks_per_sm(int block_size, std::size_t dynamic_shared) {
    if (block_size <= 0 || block_size > 1024 || dynamic_shared > kMaxDynamicSharedOptIn) return 0;
    const int warps_threads = (block_size + 31) / 32 * 32;
    const int by_threads = kThreadsPerSm / warps_threads;
    const int by_shared =
        kSharedPerSm / (static_cast<int>(dynamic_shared) + kReservedSharedPerBlock);
    return std::min({kBlocksPerSm, by_threads, by_shared});
}

// Dynamic shared memory each of `blocks` blocks on one SM may have.
std::size_t available_dynamic_shared(int blocks, int block_size) {
    if (blocks_per_sm(block_size, 0) < blocks) return 0;
    const int each = kSharedPerSm / blocks - kReservedSharedPerBlock;
    return static_cast<std::size_t>(std::clamp(each, 0, kMaxDynamicSharedOptIn));
}

int cluster_blocks(const CUlaunchConfig& config) {
    for (unsigned i = 0; i < config.numAttrs && config.attrs != nullptr; ++i)
        if (config.attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            const auto& d = config.attrs[i].value.clusterDim;
            return static_cast<int>(d.x * d.y * d.z);
        }
    return 1; // no cluster asked for: every block is a cluster of one
}

CUresult active_clusters(int* clusters, const Function* f, const CUlaunchConfig& config) {
    const int size = cluster_blocks(config);
    const int limit =
        f->non_portable_cluster.load() != 0 ? kNonPortableClusterBlocks : kPortableClusterBlocks;
    if (size <= 0 || size > limit) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    const int per_sm =
        blocks_per_sm(static_cast<int>(config.blockDimX * config.blockDimY * config.blockDimZ),
                      config.sharedMemBytes);
    int total = 0;
    for (const int sms : kGpcSms)
        total += sms * per_sm / size;
    *clusters = total;
    return CUDA_SUCCESS;
}

CUresult get_attribute(int* pi, CUfunction_attribute attrib, const Function* f) {
    if (pi == nullptr || f == nullptr) return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *pi = 1024;
        break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
        *pi = 32;
        break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
        *pi = 90;
        break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *pi = f->max_dynamic_shared.load();
        break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        *pi = f->non_portable_cluster.load();
        break;
    default:
        *pi = 0;
    }
    return CUDA_SUCCESS;
}

CUresult set_attribute(CUfunction_attribute attrib, int value, Function* f) {
    if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || value > kMaxDynamicSharedOptIn) return CUDA_ERROR_INVALID_VALUE;
        f->max_dynamic_shared.store(value);
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        f->non_portable_cluster.store(value != 0);
        return CUDA_SUCCESS;
    default:
        return CUDA_SUCCESS;
    }
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
FAKECUDA_ACCEPT(cuKernelGetLibrary, (CUlibrary * pLib, CUkernel kernel), {
    if (pLib == nullptr || kernel == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pLib = reinterpret_cast<CUlibrary>(reinterpret_cast<Function*>(kernel)->library);
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
                    (void)dev;
                    rc = get_attribute(pi, attrib, reinterpret_cast<Function*>(kernel));
                })
FAKECUDA_ACCEPT(cuKernelSetAttribute,
                (CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev), {
                    (void)dev;
                    rc = set_attribute(attrib, val, reinterpret_cast<Function*>(kernel));
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
FAKECUDA_ACCEPT(cuFuncGetAttribute, (int* pi, CUfunction_attribute attrib, CUfunction hfunc),
                { rc = get_attribute(pi, attrib, reinterpret_cast<Function*>(hfunc)); })
FAKECUDA_ACCEPT(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value),
                { rc = set_attribute(attrib, value, reinterpret_cast<Function*>(hfunc)); })
FAKECUDA_ACCEPT(cuFuncSetCacheConfig, (CUfunction hfunc, CUfunc_cache config), {
    (void)hfunc;
    (void)config;
})
FAKECUDA_ACCEPT(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
                (int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize,
                 unsigned int flags),
                {
                    (void)flags;
                    if (numBlocks == nullptr || func == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *numBlocks = blocks_per_sm(blockSize, dynamicSMemSize);
                })
FAKECUDA_ACCEPT(cuOccupancyAvailableDynamicSMemPerBlock,
                (size_t * dynamicSmemSize, CUfunction func, int numBlocks, int blockSize), {
                    if (dynamicSmemSize == nullptr || func == nullptr || numBlocks <= 0 ||
                        blockSize <= 0)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *dynamicSmemSize = available_dynamic_shared(numBlocks, blockSize);
                })
FAKECUDA_ACCEPT(cuOccupancyMaxPotentialClusterSize,
                (int* clusterSize, CUfunction func, const CUlaunchConfig* config), {
                    if (clusterSize == nullptr || func == nullptr || config == nullptr) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        const Function* f = reinterpret_cast<Function*>(func);
                        const int limit = f->non_portable_cluster.load() != 0
                                              ? kNonPortableClusterBlocks
                                              : kPortableClusterBlocks;
                        const int per_sm =
                            blocks_per_sm(static_cast<int>(config->blockDimX * config->blockDimY *
                                                           config->blockDimZ),
                                          config->sharedMemBytes);
                        *clusterSize = std::min(limit, per_sm * kGpcSms[0]);
                    }
                })
FAKECUDA_ACCEPT(cuOccupancyMaxActiveClusters,
                (int* numClusters, CUfunction func, const CUlaunchConfig* config), {
                    if (numClusters == nullptr || func == nullptr || config == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        rc = active_clusters(numClusters, reinterpret_cast<Function*>(func),
                                             *config);
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
                    if (numBlocks == nullptr || func == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *numBlocks = blocks_per_sm(blockSize, dynamicSMemSize);
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
