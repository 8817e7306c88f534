// Device and context queries the real libcudart makes at initialisation (about 100 attributes, the
// UUID and PCI location that the integrity check hashes, the module loading mode, the primary
// context's state) and the context calls it makes later. The device looks like a 132-SM Hopper.
#include "simple_call.hpp"

#include "config.hpp"
#include "export_tables.hpp"

#include <cstdio>
#include <cstring>

namespace fakecuda {

void device_uuid(int device, CUuuid* uuid) noexcept {
    std::memset(uuid->bytes, 0, sizeof uuid->bytes);
    std::memcpy(uuid->bytes, "fakecuda-device", 15);
    uuid->bytes[15] = static_cast<char>(device);
}

void device_pci(int device, int* domain, int* bus, int* dev) noexcept {
    *domain = 0;
    *bus = 0x10 + device;
    *dev = 0;
}

} // namespace fakecuda

namespace {

int attribute(CUdevice_attribute a, int device) {
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
        return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
        return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
        return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
        return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
        return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        return 132;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
        return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
        return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH:
        return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH:
        return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT:
        return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH:
        return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
        return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH:
        return 16384;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT:
        return 512;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
        return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
        return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
        return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
        return 52428800;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
        return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
        return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
        return 0x10 + device;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
        return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
        return 0;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:
        return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
        return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
        return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID:
        return device;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO:
        return 2;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
        return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
        return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        return 232448;
    case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES:
        return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
        return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE:
        return 32505856;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE:
        return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
        return 1024;
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
        return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
        return 1;
    case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT:
        return 4;
    default:
        return 0;
    }
}

} // namespace

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
    const fakecuda::Call call{fakecuda::call_id("cuDeviceGetAttribute")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && pi == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && !fakecuda::valid_device(dev)) rc = CUDA_ERROR_INVALID_DEVICE;
    if (rc == CUDA_SUCCESS && (attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX))
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) *pi = attribute(attrib, dev);
    return call.done(rc, "attrib=%d, dev=%d, *pi=%d", static_cast<int>(attrib), dev,
                     rc == CUDA_SUCCESS ? *pi : -1);
}

FAKECUDA_ACCEPT(cuDeviceGetUuid, (CUuuid * uuid, CUdevice dev), {
    if (uuid == nullptr || !fakecuda::valid_device(dev))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        fakecuda::device_uuid(dev, uuid);
})
FAKECUDA_ACCEPT(cuDeviceGetUuid_v2, (CUuuid * uuid, CUdevice dev), {
    if (uuid == nullptr || !fakecuda::valid_device(dev))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        fakecuda::device_uuid(dev, uuid);
})
FAKECUDA_ACCEPT(cuDeviceGetPCIBusId, (char* pciBusId, int len, CUdevice dev), {
    if (pciBusId == nullptr || len <= 0 || !fakecuda::valid_device(dev))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        std::snprintf(pciBusId, static_cast<std::size_t>(len), "0000:%02x:00.0", 0x10 + dev);
})
FAKECUDA_ACCEPT(cuDeviceGetByPCIBusId, (CUdevice * dev, const char* pciBusId), {
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    if (dev == nullptr || pciBusId == nullptr ||
        std::sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4 ||
        !fakecuda::valid_device(static_cast<int>(bus) - 0x10))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *dev = static_cast<int>(bus) - 0x10;
})
FAKECUDA_ACCEPT(cuDeviceGetP2PAttribute,
                (int* value, CUdevice_P2PAttribute attrib, CUdevice src, CUdevice dst), {
                    (void)attrib;
                    if (value == nullptr || !fakecuda::valid_device(src) ||
                        !fakecuda::valid_device(dst))
                        rc = CUDA_ERROR_INVALID_DEVICE;
                    else
                        *value = src != dst;
                })
FAKECUDA_ACCEPT(cuDeviceCanAccessPeer, (int* canAccessPeer, CUdevice dev, CUdevice peer), {
    if (canAccessPeer == nullptr || !fakecuda::valid_device(dev) || !fakecuda::valid_device(peer))
        rc = CUDA_ERROR_INVALID_DEVICE;
    else
        *canAccessPeer = dev != peer;
})
FAKECUDA_ACCEPT(cuModuleGetLoadingMode, (CUmoduleLoadingMode * mode), {
    if (mode == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *mode = CU_MODULE_LAZY_LOADING;
})
FAKECUDA_ACCEPT(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int* flags, int* active), {
    if (flags == nullptr || active == nullptr || !fakecuda::valid_device(dev)) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        *flags = 0;
        *active = 1;
    }
})
FAKECUDA_ACCEPT(cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags), {
    (void)flags;
    if (!fakecuda::valid_device(dev)) rc = CUDA_ERROR_INVALID_DEVICE;
})
FAKECUDA_ACCEPT(cuDevicePrimaryCtxReset, (CUdevice dev), {
    if (!fakecuda::valid_device(dev))
        rc = CUDA_ERROR_INVALID_DEVICE;
    else
        fakecuda::destroy_context_storage(fakecuda::primary_context(dev));
})
FAKECUDA_ACCEPT(cuDevicePrimaryCtxReset_v2, (CUdevice dev), {
    if (!fakecuda::valid_device(dev))
        rc = CUDA_ERROR_INVALID_DEVICE;
    else
        fakecuda::destroy_context_storage(fakecuda::primary_context(dev));
})
FAKECUDA_ACCEPT(cuCtxGetFlags, (unsigned int* flags), {
    if (flags == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *flags = 0;
})
FAKECUDA_ACCEPT(cuCtxGetApiVersion, (CUcontext ctx, unsigned int* version), {
    (void)ctx;
    if (version == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *version = 3020;
})
FAKECUDA_ACCEPT(cuCtxGetLimit, (size_t * pvalue, CUlimit limit), {
    if (pvalue == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pvalue = limit == CU_LIMIT_STACK_SIZE         ? 1024
                  : limit == CU_LIMIT_MALLOC_HEAP_SIZE ? 8388608
                                                       : 0;
})
FAKECUDA_ACCEPT(cuCtxSetLimit, (CUlimit limit, size_t value), {
    (void)limit;
    (void)value;
})
FAKECUDA_ACCEPT(cuCtxGetCacheConfig, (CUfunc_cache * pconfig), {
    if (pconfig == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pconfig = CU_FUNC_CACHE_PREFER_NONE;
})
FAKECUDA_ACCEPT(cuCtxSetCacheConfig, (CUfunc_cache config), { (void)config; })
FAKECUDA_ACCEPT(cuCtxGetStreamPriorityRange, (int* leastPriority, int* greatestPriority), {
    if (leastPriority != nullptr) *leastPriority = 0;
    if (greatestPriority != nullptr) *greatestPriority = -5;
})
FAKECUDA_ACCEPT(cuCtxSynchronize, (), {})
FAKECUDA_ACCEPT(cuCtxSynchronize_v2, (CUcontext ctx), { (void)ctx; })
FAKECUDA_ACCEPT(cuCtxPushCurrent_v2, (CUcontext ctx), {
    const int device = fakecuda::device_of_context(ctx);
    if (device < 0)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else
        fakecuda::set_current_device(device);
})
FAKECUDA_ACCEPT(cuCtxPopCurrent_v2, (CUcontext * pctx), {
    if (pctx != nullptr) *pctx = fakecuda::primary_context(fakecuda::current_device());
})
FAKECUDA_ACCEPT(cuCtxEnablePeerAccess, (CUcontext peer, unsigned int flags), {
    (void)peer;
    (void)flags;
})
FAKECUDA_ACCEPT(cuCtxDisablePeerAccess, (CUcontext peer), { (void)peer; })
