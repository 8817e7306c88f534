// Allocation paths beyond linear memory and VMM, each reached by the real libcudart or by
// frameworks: CUDA arrays (cudaMallocArray, cudaMalloc3DArray, mipmapped arrays), host
// registration (cudaHostRegister), IPC handles, pool pointer export/import, external memory; and
// the pointer, pool and address-range queries around them.
//
// Sizes of arrays are width x height x depth x element size x channels (each dimension at least 1;
// mipmapped: summed over levels), the same estimate the tracer records. Imported memory (IPC, pool
// import, external memory) is a fresh mapping of the exported size that shares no contents with
// the exporter and is not charged to this process's device.
#include "simple_call.hpp"
#include "vmm_state.hpp"

#include "accounting.hpp"
#include "linear_memory.hpp"
#include "pools.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

using fakecuda::Kind;
using fakecuda::mask;

namespace {

std::size_t format_bytes(CUarray_format f) {
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4;
    default:
        return 0;
    }
}

std::size_t at_least_1(std::size_t v) {
    return v == 0 ? 1 : v;
}

std::size_t array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels) {
    const std::size_t element = format_bytes(d.Format) * d.NumChannels;
    std::size_t total = 0;
    for (unsigned l = 0; l < levels; ++l)
        total += at_least_1(d.Width >> l) * (d.Height ? at_least_1(d.Height >> l) : 1) *
                 (d.Depth ? at_least_1(d.Depth >> l) : 1) * element;
    return total;
}

std::mutex g_mutex;
std::map<std::uintptr_t, CUDA_ARRAY3D_DESCRIPTOR>& descriptors() {
    static auto* m = new std::map<std::uintptr_t, CUDA_ARRAY3D_DESCRIPTOR>;
    return *m;
}
std::map<std::uintptr_t, std::size_t>& registered() {
    static auto* m = new std::map<std::uintptr_t, std::size_t>;
    return *m;
}

CUresult create_array(std::uintptr_t* out, const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels) {
    if (d.Width == 0 || format_bytes(d.Format) == 0 ||
        (d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4) || levels == 0)
        return CUDA_ERROR_INVALID_VALUE;
    const CUresult rc = fakecuda::allocate(Kind::array, fakecuda::current_device(),
                                           array_bytes(d, levels), false, out);
    if (rc != CUDA_SUCCESS) return rc;
    std::lock_guard lock(g_mutex);
    descriptors()[*out] = d;
    return CUDA_SUCCESS;
}

CUresult destroy_array(std::uintptr_t address) {
    if (address == 0) return CUDA_ERROR_INVALID_HANDLE;
    const CUresult rc = fakecuda::release(address, mask(Kind::array));
    if (rc != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
    std::lock_guard lock(g_mutex);
    descriptors().erase(address);
    return CUDA_SUCCESS;
}

CUDA_ARRAY3D_DESCRIPTOR to_3d(const CUDA_ARRAY_DESCRIPTOR& d) {
    CUDA_ARRAY3D_DESCRIPTOR d3{};
    d3.Width = d.Width;
    d3.Height = d.Height;
    d3.Format = d.Format;
    d3.NumChannels = d.NumChannels;
    return d3;
}

// What an exporter writes into the opaque handle bytes, and an importer reads back.
struct ExportRecord {
    char magic[8];
    std::uint64_t address;
    std::uint64_t bytes;
    std::int64_t pid;
};
constexpr char kExportMagic[8] = {'f', 'a', 'k', 'e', 'i', 'p', 'c', '\0'};

template <typename Handle> CUresult export_block(Handle* handle, CUdeviceptr dptr) {
    static_assert(sizeof(Handle) >= sizeof(ExportRecord));
    Kind kind{};
    int device = 0;
    std::uintptr_t base = 0;
    std::size_t bytes = 0;
    if (handle == nullptr || !fakecuda::lookup(dptr, &kind, &device, &base, &bytes) ||
        kind != Kind::device)
        return CUDA_ERROR_INVALID_VALUE;
    ExportRecord r{};
    std::memcpy(r.magic, kExportMagic, sizeof r.magic);
    r.address = base;
    r.bytes = bytes;
    r.pid = getpid();
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle, &r, sizeof r);
    return CUDA_SUCCESS;
}

template <typename Handle> CUresult import_block(CUdeviceptr* out, const Handle& handle) {
    ExportRecord r{};
    std::memcpy(&r, &handle, sizeof r);
    if (out == nullptr || std::memcmp(r.magic, kExportMagic, sizeof r.magic) != 0 || r.bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    std::uintptr_t address = 0;
    const CUresult rc =
        fakecuda::allocate(Kind::imported, fakecuda::current_device(), r.bytes, false, &address);
    if (rc == CUDA_SUCCESS) *out = address;
    return rc;
}

struct ExternalMemory {
    unsigned long long size;
};

} // namespace

// --- arrays ----------------------------------------------------------------------------------
FAKECUDA_ACCEPT(cuArrayCreate_v2, (CUarray * pHandle, const CUDA_ARRAY_DESCRIPTOR* pAllocateArray),
                {
                    std::uintptr_t a = 0;
                    if (pHandle == nullptr || pAllocateArray == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else if ((rc = create_array(&a, to_3d(*pAllocateArray), 1)) == CUDA_SUCCESS)
                        *pHandle = reinterpret_cast<CUarray>(a);
                })
FAKECUDA_ACCEPT(cuArray3DCreate_v2,
                (CUarray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray), {
                    std::uintptr_t a = 0;
                    if (pHandle == nullptr || pAllocateArray == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else if ((rc = create_array(&a, *pAllocateArray, 1)) == CUDA_SUCCESS)
                        *pHandle = reinterpret_cast<CUarray>(a);
                })
FAKECUDA_ACCEPT(cuArrayDestroy, (CUarray hArray),
                { rc = destroy_array(reinterpret_cast<std::uintptr_t>(hArray)); })
FAKECUDA_ACCEPT(cuMipmappedArrayCreate,
                (CUmipmappedArray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pMipmappedArrayDesc,
                 unsigned int numMipmapLevels),
                {
                    std::uintptr_t a = 0;
                    if (pHandle == nullptr || pMipmappedArrayDesc == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else if ((rc = create_array(&a, *pMipmappedArrayDesc, numMipmapLevels)) ==
                             CUDA_SUCCESS)
                        *pHandle = reinterpret_cast<CUmipmappedArray>(a);
                })
FAKECUDA_ACCEPT(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray),
                { rc = destroy_array(reinterpret_cast<std::uintptr_t>(hMipmappedArray)); })
// A level is the mipmapped array itself, seen through another handle value: never destroyed alone.
FAKECUDA_ACCEPT(cuMipmappedArrayGetLevel,
                (CUarray * pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level), {
                    if (pLevelArray == nullptr || hMipmappedArray == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *pLevelArray = reinterpret_cast<CUarray>(
                            reinterpret_cast<std::uintptr_t>(hMipmappedArray) + level);
                })
FAKECUDA_ACCEPT(cuArray3DGetDescriptor_v2,
                (CUDA_ARRAY3D_DESCRIPTOR * pArrayDescriptor, CUarray hArray), {
                    std::lock_guard lock(g_mutex);
                    auto it = descriptors().find(reinterpret_cast<std::uintptr_t>(hArray));
                    if (pArrayDescriptor == nullptr || it == descriptors().end())
                        rc = CUDA_ERROR_INVALID_HANDLE;
                    else
                        *pArrayDescriptor = it->second;
                })
FAKECUDA_ACCEPT(cuArrayGetDescriptor_v2, (CUDA_ARRAY_DESCRIPTOR * pArrayDescriptor, CUarray hArray),
                {
                    std::lock_guard lock(g_mutex);
                    auto it = descriptors().find(reinterpret_cast<std::uintptr_t>(hArray));
                    if (pArrayDescriptor == nullptr || it == descriptors().end()) {
                        rc = CUDA_ERROR_INVALID_HANDLE;
                    } else {
                        pArrayDescriptor->Width = it->second.Width;
                        pArrayDescriptor->Height = it->second.Height;
                        pArrayDescriptor->Format = it->second.Format;
                        pArrayDescriptor->NumChannels = it->second.NumChannels;
                    }
                })
FAKECUDA_ACCEPT(cuArrayGetMemoryRequirements,
                (CUDA_ARRAY_MEMORY_REQUIREMENTS * memoryRequirements, CUarray array,
                 CUdevice device),
                {
                    (void)device;
                    std::lock_guard lock(g_mutex);
                    auto it = descriptors().find(reinterpret_cast<std::uintptr_t>(array));
                    if (memoryRequirements == nullptr || it == descriptors().end()) {
                        rc = CUDA_ERROR_INVALID_HANDLE;
                    } else {
                        std::memset(memoryRequirements, 0, sizeof *memoryRequirements);
                        memoryRequirements->size = array_bytes(it->second, 1);
                        memoryRequirements->alignment = 512;
                    }
                })

// --- host registration -----------------------------------------------------------------------
FAKECUDA_ACCEPT(cuMemHostRegister_v2, (void* p, size_t bytesize, unsigned int Flags), {
    (void)Flags;
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    std::lock_guard lock(g_mutex);
    if (p == nullptr || bytesize == 0) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (registered().count(address) != 0) {
        rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    } else {
        registered()[address] = bytesize;
        fakecuda::charge_host_registered(bytesize);
    }
})
FAKECUDA_ACCEPT(cuMemHostUnregister, (void* p), {
    std::lock_guard lock(g_mutex);
    auto it = registered().find(reinterpret_cast<std::uintptr_t>(p));
    if (it == registered().end()) {
        rc = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    } else {
        fakecuda::credit_host_registered(it->second);
        registered().erase(it);
    }
})
FAKECUDA_ACCEPT(cuMemHostGetDevicePointer_v2, (CUdeviceptr * pdptr, void* p, unsigned int Flags), {
    (void)Flags;
    if (pdptr == nullptr || p == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pdptr = reinterpret_cast<CUdeviceptr>(p);
})
FAKECUDA_ACCEPT(cuMemHostGetFlags, (unsigned int* pFlags, void* p), {
    (void)p;
    if (pFlags == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pFlags = 0;
})

// --- IPC and pool pointer export -------------------------------------------------------------
FAKECUDA_ACCEPT(cuIpcGetMemHandle, (CUipcMemHandle * pHandle, CUdeviceptr dptr),
                { rc = export_block(pHandle, dptr); })
FAKECUDA_ACCEPT(cuIpcOpenMemHandle,
                (CUdeviceptr * pdptr, CUipcMemHandle handle, unsigned int Flags), {
                    (void)Flags;
                    rc = import_block(pdptr, handle);
                })
FAKECUDA_ACCEPT(cuIpcOpenMemHandle_v2,
                (CUdeviceptr * pdptr, CUipcMemHandle handle, unsigned int Flags), {
                    (void)Flags;
                    rc = import_block(pdptr, handle);
                })
FAKECUDA_ACCEPT(cuIpcCloseMemHandle, (CUdeviceptr dptr),
                { rc = fakecuda::release(dptr, mask(Kind::imported)); })
FAKECUDA_ACCEPT(cuMemPoolExportPointer, (CUmemPoolPtrExportData * shareData_out, CUdeviceptr ptr),
                { rc = export_block(shareData_out, ptr); })
FAKECUDA_ACCEPT(cuMemPoolImportPointer,
                (CUdeviceptr * ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData* shareData), {
                    if (fakecuda::pool_device(pool) < 0 || shareData == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        rc = import_block(ptr_out, *shareData);
                })

// --- external memory -------------------------------------------------------------------------
FAKECUDA_ACCEPT(
    cuImportExternalMemory,
    (CUexternalMemory * extMem_out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* memHandleDesc), {
        if (extMem_out == nullptr || memHandleDesc == nullptr || memHandleDesc->size == 0)
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            *extMem_out =
                reinterpret_cast<CUexternalMemory>(new ExternalMemory{memHandleDesc->size});
    })
FAKECUDA_ACCEPT(cuExternalMemoryGetMappedBuffer,
                (CUdeviceptr * devPtr, CUexternalMemory extMem,
                 const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* bufferDesc),
                {
                    const auto* m = reinterpret_cast<const ExternalMemory*>(extMem);
                    std::uintptr_t address = 0;
                    if (devPtr == nullptr || m == nullptr || bufferDesc == nullptr ||
                        bufferDesc->size == 0 || bufferDesc->offset + bufferDesc->size > m->size)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else if ((rc = fakecuda::allocate(Kind::imported, fakecuda::current_device(),
                                                      bufferDesc->size, false, &address)) ==
                             CUDA_SUCCESS)
                        *devPtr = address;
                })
FAKECUDA_ACCEPT(cuDestroyExternalMemory, (CUexternalMemory extMem), {
    if (extMem == nullptr)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        delete reinterpret_cast<ExternalMemory*>(extMem);
})

// --- queries ---------------------------------------------------------------------------------
namespace {

CUresult pointer_attribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    Kind kind{};
    int device = 0;
    std::uintptr_t base = 0;
    std::size_t bytes = 0;
    const bool known = fakecuda::lookup(ptr, &kind, &device, &base, &bytes);
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        if (!known) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<CUcontext*>(data) = fakecuda::primary_context(device < 0 ? 0 : device);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        if (!known) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<unsigned*>(data) =
            kind == Kind::host_pinned ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!known) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *static_cast<unsigned*>(data) = known && kind == Kind::managed;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        if (!known) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<int*>(data) = device < 0 ? 0 : device;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        if (!known) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<CUdeviceptr*>(data) = base;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        if (!known) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<std::size_t*>(data) = bytes;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *static_cast<unsigned*>(data) = known;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *static_cast<unsigned long long*>(data) = base;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *static_cast<CUmemoryPool*>(data) = nullptr;
        return CUDA_SUCCESS;
    default:
        std::memset(data, 0, sizeof(int));
        return CUDA_SUCCESS;
    }
}

} // namespace

FAKECUDA_ACCEPT(cuPointerGetAttribute, (void* data, CUpointer_attribute attribute, CUdeviceptr ptr),
                {
                    if (data == nullptr)
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        rc = pointer_attribute(data, attribute, ptr);
                })
// Like the real driver, unknown pointers are not an error here: their attributes read as zero.
FAKECUDA_ACCEPT(cuPointerGetAttributes,
                (unsigned int numAttributes, CUpointer_attribute* attributes, void** data,
                 CUdeviceptr ptr),
                {
                    if (attributes == nullptr || data == nullptr) {
                        rc = CUDA_ERROR_INVALID_VALUE;
                    } else {
                        for (unsigned i = 0; i < numAttributes; ++i) {
                            if (data[i] == nullptr) continue;
                            if (pointer_attribute(data[i], attributes[i], ptr) != CUDA_SUCCESS)
                                std::memset(data[i], 0, sizeof(int));
                        }
                    }
                })
FAKECUDA_ACCEPT(cuMemGetAddressRange_v2, (CUdeviceptr * pbase, size_t* psize, CUdeviceptr dptr), {
    Kind kind{};
    int device = 0;
    std::uintptr_t base = 0;
    std::size_t bytes = 0;
    CUdeviceptr mapped = 0;
    if (fakecuda::lookup(dptr, &kind, &device, &base, &bytes)) {
        if (pbase != nullptr) *pbase = base;
        if (psize != nullptr) *psize = bytes;
    } else if (fakecuda::vmm_mapping_of(dptr, &mapped, &bytes, &device)) {
        // A VMM address: the mapping it lies in (NCCL unmaps and frees exactly that range).
        if (pbase != nullptr) *pbase = mapped;
        if (psize != nullptr) *psize = bytes;
    } else {
        rc = CUDA_ERROR_NOT_FOUND;
    }
})

// --- pools -----------------------------------------------------------------------------------
FAKECUDA_ACCEPT(cuMemPoolSetAttribute, (CUmemoryPool pool, CUmemPool_attribute attr, void* value), {
    (void)attr;
    (void)value;
    if (fakecuda::pool_device(pool) < 0) rc = CUDA_ERROR_INVALID_VALUE;
})
FAKECUDA_ACCEPT(cuMemPoolGetAttribute, (CUmemoryPool pool, CUmemPool_attribute attr, void* value), {
    if (fakecuda::pool_device(pool) < 0 || value == nullptr)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (attr == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
             attr == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC ||
             attr == CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)
        *static_cast<int*>(value) = 1;
    else
        *static_cast<cuuint64_t*>(value) = 0;
})
FAKECUDA_ACCEPT(cuMemPoolTrimTo, (CUmemoryPool pool, size_t minBytesToKeep), {
    (void)minBytesToKeep;
    if (fakecuda::pool_device(pool) < 0) rc = CUDA_ERROR_INVALID_VALUE;
})
FAKECUDA_ACCEPT(cuMemPoolSetAccess, (CUmemoryPool pool, const CUmemAccessDesc* map, size_t count), {
    (void)map;
    (void)count;
    if (fakecuda::pool_device(pool) < 0) rc = CUDA_ERROR_INVALID_VALUE;
})
FAKECUDA_ACCEPT(cuDeviceGetMemPool, (CUmemoryPool * pool, CUdevice dev), {
    if (pool == nullptr || !fakecuda::valid_device(dev))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pool = fakecuda::default_pool(dev);
})
FAKECUDA_ACCEPT(cuDeviceSetMemPool, (CUdevice dev, CUmemoryPool pool), {
    if (!fakecuda::valid_device(dev) || fakecuda::pool_device(pool) < 0)
        rc = CUDA_ERROR_INVALID_VALUE;
})
FAKECUDA_ACCEPT(cuMemGetDefaultMemPool,
                (CUmemoryPool * pool_out, CUmemLocation* location, CUmemAllocationType type), {
                    (void)type;
                    if (pool_out == nullptr || location == nullptr ||
                        location->type != CU_MEM_LOCATION_TYPE_DEVICE ||
                        !fakecuda::valid_device(location->id))
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *pool_out = fakecuda::default_pool(location->id);
                })
FAKECUDA_ACCEPT(cuMemGetMemPool,
                (CUmemoryPool * pool, CUmemLocation* location, CUmemAllocationType type), {
                    (void)type;
                    if (pool == nullptr || location == nullptr ||
                        location->type != CU_MEM_LOCATION_TYPE_DEVICE ||
                        !fakecuda::valid_device(location->id))
                        rc = CUDA_ERROR_INVALID_VALUE;
                    else
                        *pool = fakecuda::default_pool(location->id);
                })
