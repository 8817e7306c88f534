#include "hooks/driver_impls.h"

#include <algorithm>

#include "hooks/libcuda_queries.h"
#include "hooks/reentry.h"
#include "recorder/recorder.h"

namespace gpuleak::hooks::impl {
namespace {

using format::Api;
using format::MemKind;
using format::Space;

// Allocation calls: call first, record after (the address exists only then).
template <typename Call>
CUresult traced_alloc(Api api, MemKind kind, int device, size_t size, CUstream stream, Call&& call,
                      CUdeviceptr* out) {
    HookGuard guard;
    CUresult r = call();
    if (guard.nested()) return r;
    if (r == CUDA_SUCCESS && out) {
        recorder::alloc(api_or_runtime(api), kind, device, *out, size);
    } else if (r != CUDA_SUCCESS) {
        MemInfo info = r == CUDA_ERROR_OUT_OF_MEMORY ? query_mem_info(stream) : MemInfo{};
        recorder::alloc_failed(api_or_runtime(api), kind, device, size, r, info.free, info.total);
    }
    return r;
}

// Frees: timestamp before the call (no other thread can get the address back before it), record
// after with the result, so a rejected free is visible as such. NULL is passed straight through.
template <typename Call> CUresult traced_free(Api api, Space space, uint64_t address, Call&& call) {
    HookGuard guard;
    if (guard.nested() || address == 0) return call();
    uint64_t t = recorder::event_time();
    CUresult r = call();
    recorder::free(t, api_or_runtime(api), space, address, r);
    return r;
}

const CUstream kNoStream = nullptr;

} // namespace

CUresult cuMemAlloc_v2(PFN_cuMemAlloc_v3020 real, CUdeviceptr* dptr, size_t bytesize) {
    return traced_alloc(
        Api::cuMemAlloc_v2, MemKind::Device, current_device(), bytesize, kNoStream,
        [&] { return real(dptr, bytesize); }, dptr);
}

CUresult cuMemAllocPitch_v2(PFN_cuMemAllocPitch_v3020 real, CUdeviceptr* dptr, size_t* pitch,
                            size_t width, size_t height, unsigned int elem) {
    HookGuard guard;
    CUresult r = real(dptr, pitch, width, height, elem);
    if (guard.nested()) return r;
    Api api = api_or_runtime(Api::cuMemAllocPitch_v2);
    if (r == CUDA_SUCCESS && dptr && pitch) {
        recorder::alloc(api, MemKind::Device, current_device(), *dptr, *pitch * height);
    } else if (r != CUDA_SUCCESS) {
        MemInfo info = r == CUDA_ERROR_OUT_OF_MEMORY ? query_mem_info(kNoStream) : MemInfo{};
        recorder::alloc_failed(api, MemKind::Device, current_device(), width * height, r, info.free,
                               info.total);
    }
    return r;
}

CUresult cuMemAllocManaged(PFN_cuMemAllocManaged_v6000 real, CUdeviceptr* dptr, size_t bytesize,
                           unsigned int flags) {
    return traced_alloc(
        Api::cuMemAllocManaged, MemKind::Managed, current_device(), bytesize, kNoStream,
        [&] { return real(dptr, bytesize, flags); }, dptr);
}

CUresult cuMemFree_v2(PFN_cuMemFree_v3020 real, CUdeviceptr dptr) {
    return traced_free(Api::cuMemFree_v2, Space::Device, dptr, [&] { return real(dptr); });
}

// A stream-ordered allocation on a capturing stream becomes graph memory.
static MemKind async_kind(CUstream stream, bool per_thread) {
    return stream_capturing(stream, per_thread) ? MemKind::Graph : MemKind::Device;
}

CUresult cuMemAllocAsync(PFN_cuMemAllocAsync_v11020 real, CUdeviceptr* dptr, size_t bytesize,
                         CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocAsync, async_kind(stream, false), current_device(), bytesize, stream,
        [&] { return real(dptr, bytesize, stream); }, dptr);
}

CUresult cuMemAllocAsync_ptsz(PFN_cuMemAllocAsync_v11020_ptsz real, CUdeviceptr* dptr,
                              size_t bytesize, CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocAsync_ptsz, async_kind(stream, true), current_device(), bytesize, stream,
        [&] { return real(dptr, bytesize, stream); }, dptr);
}

CUresult cuMemAllocFromPoolAsync(PFN_cuMemAllocFromPoolAsync_v11020 real, CUdeviceptr* dptr,
                                 size_t bytesize, CUmemoryPool pool, CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocFromPoolAsync, async_kind(stream, false), current_device(), bytesize, stream,
        [&] { return real(dptr, bytesize, pool, stream); }, dptr);
}

CUresult cuMemAllocFromPoolAsync_ptsz(PFN_cuMemAllocFromPoolAsync_v11020_ptsz real,
                                      CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocFromPoolAsync_ptsz, async_kind(stream, true), current_device(), bytesize,
        stream, [&] { return real(dptr, bytesize, pool, stream); }, dptr);
}

CUresult cuMemFreeAsync(PFN_cuMemFreeAsync_v11020 real, CUdeviceptr dptr, CUstream stream) {
    return traced_free(Api::cuMemFreeAsync, Space::Device, dptr,
                       [&] { return real(dptr, stream); });
}

CUresult cuMemFreeAsync_ptsz(PFN_cuMemFreeAsync_v11020_ptsz real, CUdeviceptr dptr,
                             CUstream stream) {
    return traced_free(Api::cuMemFreeAsync_ptsz, Space::Device, dptr,
                       [&] { return real(dptr, stream); });
}

CUresult cuMemCreate(PFN_cuMemCreate_v10020 real, CUmemGenericAllocationHandle* handle, size_t size,
                     const CUmemAllocationProp* prop, unsigned long long flags) {
    HookGuard guard;
    CUresult r = real(handle, size, prop, flags);
    if (guard.nested() || !prop) return r;
    // Physical memory is classified by where it lives; the device comes from the request, never
    // from the calling thread's context (which may not exist: HAMi-core #169).
    bool device = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
    MemKind kind = device ? MemKind::Device : MemKind::PinnedHost;
    int ordinal = device ? prop->location.id : -1;
    if (r == CUDA_SUCCESS && handle) {
        recorder::alloc(Api::cuMemCreate, kind, ordinal, *handle, size);
    } else if (r != CUDA_SUCCESS) {
        MemInfo info =
            r == CUDA_ERROR_OUT_OF_MEMORY && device ? query_mem_info(kNoStream) : MemInfo{};
        recorder::alloc_failed(Api::cuMemCreate, kind, ordinal, size, r, info.free, info.total);
    }
    return r;
}

CUresult cuMemRelease(PFN_cuMemRelease_v10020 real, CUmemGenericAllocationHandle handle) {
    HookGuard guard;
    if (guard.nested()) return real(handle);
    uint64_t t = recorder::event_time();
    CUresult r = real(handle);
    if (r == CUDA_SUCCESS) recorder::vmm_release(t, handle);
    return r;
}

CUresult cuMemRetainAllocationHandle(PFN_cuMemRetainAllocationHandle_v11000 real,
                                     CUmemGenericAllocationHandle* handle, void* addr) {
    HookGuard guard;
    CUresult r = real(handle, addr);
    if (!guard.nested() && r == CUDA_SUCCESS && handle)
        recorder::vmm_retain(*handle, reinterpret_cast<uint64_t>(addr));
    return r;
}

CUresult cuMemMap(PFN_cuMemMap_v10020 real, CUdeviceptr ptr, size_t size, size_t offset,
                  CUmemGenericAllocationHandle handle, unsigned long long flags) {
    HookGuard guard;
    CUresult r = real(ptr, size, offset, handle, flags);
    if (!guard.nested() && r == CUDA_SUCCESS) recorder::vmm_map(ptr, size, offset, handle);
    return r;
}

CUresult cuMemUnmap(PFN_cuMemUnmap_v10020 real, CUdeviceptr ptr, size_t size) {
    HookGuard guard;
    if (guard.nested()) return real(ptr, size);
    uint64_t t = recorder::event_time();
    CUresult r = real(ptr, size);
    if (r == CUDA_SUCCESS) recorder::vmm_unmap(t, ptr, size);
    return r;
}

CUresult cuMemHostAlloc(PFN_cuMemHostAlloc_v2020 real, void** pp, size_t bytesize,
                        unsigned int flags) {
    HookGuard guard;
    CUresult r = real(pp, bytesize, flags);
    if (guard.nested()) return r;
    Api api = api_or_runtime(Api::cuMemHostAlloc);
    if (r == CUDA_SUCCESS && pp)
        recorder::alloc(api, MemKind::PinnedHost, -1, reinterpret_cast<uint64_t>(*pp), bytesize);
    else if (r != CUDA_SUCCESS)
        recorder::alloc_failed(api, MemKind::PinnedHost, -1, bytesize, r, 0, 0);
    return r;
}

CUresult cuMemAllocHost_v2(PFN_cuMemAllocHost_v3020 real, void** pp, size_t bytesize) {
    HookGuard guard;
    CUresult r = real(pp, bytesize);
    if (guard.nested()) return r;
    Api api = api_or_runtime(Api::cuMemAllocHost_v2);
    if (r == CUDA_SUCCESS && pp)
        recorder::alloc(api, MemKind::PinnedHost, -1, reinterpret_cast<uint64_t>(*pp), bytesize);
    else if (r != CUDA_SUCCESS)
        recorder::alloc_failed(api, MemKind::PinnedHost, -1, bytesize, r, 0, 0);
    return r;
}

CUresult cuMemFreeHost(PFN_cuMemFreeHost_v2000 real, void* p) {
    return traced_free(Api::cuMemFreeHost, Space::Host, reinterpret_cast<uint64_t>(p),
                       [&] { return real(p); });
}

// CUDA arrays. The driver does not say how much memory an array takes (cuArrayGetMemoryRequirements
// would be a second call, and exists only from 11.6); the record carries the estimate width x
// height x depth x element size x channels, each dimension at least 1, summed over mipmap levels.
static uint64_t array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels) {
    uint64_t element = 0;
    switch (d.Format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        element = 1;
        break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        element = 2;
        break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        element = 4;
        break;
    default: // packed, block-compressed and NV12 formats: counted as 4 bytes per element
        element = 4;
        break;
    }
    element *= d.NumChannels ? d.NumChannels : 1;
    auto level = [](uint64_t v, unsigned l) { return v == 0 ? 1 : std::max<uint64_t>(v >> l, 1); };
    uint64_t total = 0;
    for (unsigned l = 0; l < (levels ? levels : 1); ++l)
        total += level(d.Width, l) * level(d.Height, l) * level(d.Depth, l) * element;
    return total;
}

template <typename Handle, typename Call>
CUresult traced_array(Api api, Handle* handle, uint64_t bytes, Call&& call) {
    HookGuard guard;
    CUresult r = call();
    if (guard.nested()) return r;
    if (r == CUDA_SUCCESS && handle)
        recorder::alloc(api_or_runtime(api), MemKind::Array, current_device(),
                        reinterpret_cast<uint64_t>(*handle), bytes);
    else if (r != CUDA_SUCCESS)
        recorder::alloc_failed(api_or_runtime(api), MemKind::Array, current_device(), bytes, r, 0,
                               0);
    return r;
}

CUresult cuArrayCreate_v2(PFN_cuArrayCreate_v3020 real, CUarray* handle,
                          const CUDA_ARRAY_DESCRIPTOR* desc) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    if (desc) {
        d.Width = desc->Width;
        d.Height = desc->Height;
        d.Format = desc->Format;
        d.NumChannels = desc->NumChannels;
    }
    return traced_array(Api::cuArrayCreate_v2, handle, desc ? array_bytes(d, 1) : 0,
                        [&] { return real(handle, desc); });
}

CUresult cuArray3DCreate_v2(PFN_cuArray3DCreate_v3020 real, CUarray* handle,
                            const CUDA_ARRAY3D_DESCRIPTOR* desc) {
    return traced_array(Api::cuArray3DCreate_v2, handle, desc ? array_bytes(*desc, 1) : 0,
                        [&] { return real(handle, desc); });
}

CUresult cuArrayDestroy(PFN_cuArrayDestroy_v2000 real, CUarray handle) {
    return traced_free(Api::cuArrayDestroy, Space::Device, reinterpret_cast<uint64_t>(handle),
                       [&] { return real(handle); });
}

CUresult cuMipmappedArrayCreate(PFN_cuMipmappedArrayCreate_v5000 real, CUmipmappedArray* handle,
                                const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned int levels) {
    return traced_array(Api::cuMipmappedArrayCreate, handle, desc ? array_bytes(*desc, levels) : 0,
                        [&] { return real(handle, desc, levels); });
}

CUresult cuMipmappedArrayDestroy(PFN_cuMipmappedArrayDestroy_v5000 real, CUmipmappedArray handle) {
    return traced_free(Api::cuMipmappedArrayDestroy, Space::Device,
                       reinterpret_cast<uint64_t>(handle), [&] { return real(handle); });
}

// Graph memory nodes: the address exists from the node's creation; the free node ends it.
CUresult cuGraphAddMemAllocNode(PFN_cuGraphAddMemAllocNode_v11040 real, CUgraphNode* node,
                                CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                                CUDA_MEM_ALLOC_NODE_PARAMS* params) {
    HookGuard guard;
    CUresult r = real(node, graph, deps, ndeps, params);
    if (guard.nested() || !params) return r;
    int device = params->poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE
                     ? params->poolProps.location.id
                     : -1;
    if (r == CUDA_SUCCESS)
        recorder::alloc(Api::cuGraphAddMemAllocNode, MemKind::Graph, device, params->dptr,
                        params->bytesize);
    else
        recorder::alloc_failed(Api::cuGraphAddMemAllocNode, MemKind::Graph, device,
                               params->bytesize, r, 0, 0);
    return r;
}

CUresult cuGraphAddMemFreeNode(PFN_cuGraphAddMemFreeNode_v11040 real, CUgraphNode* node,
                               CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                               CUdeviceptr dptr) {
    return traced_free(Api::cuGraphAddMemFreeNode, Space::Device, dptr,
                       [&] { return real(node, graph, deps, ndeps, dptr); });
}

// Imported memory: mapped here, allocated elsewhere. The size comes from the driver's address range
// when the call does not name it.
template <typename Call>
CUresult traced_import(Api api, CUdeviceptr* dptr, uint64_t size, Call&& call) {
    HookGuard guard;
    CUresult r = call();
    if (guard.nested()) return r;
    if (r == CUDA_SUCCESS && dptr)
        recorder::alloc(api, MemKind::Imported, current_device(), *dptr,
                        size ? size : allocation_size(*dptr));
    else if (r != CUDA_SUCCESS)
        recorder::alloc_failed(api, MemKind::Imported, current_device(), size, r, 0, 0);
    return r;
}

CUresult cuIpcOpenMemHandle_v2(PFN_cuIpcOpenMemHandle_v11000 real, CUdeviceptr* dptr,
                               CUipcMemHandle handle, unsigned int flags) {
    return traced_import(Api::cuIpcOpenMemHandle_v2, dptr, 0,
                         [&] { return real(dptr, handle, flags); });
}

CUresult cuIpcCloseMemHandle(PFN_cuIpcCloseMemHandle_v4010 real, CUdeviceptr dptr) {
    return traced_free(Api::cuIpcCloseMemHandle, Space::Device, dptr, [&] { return real(dptr); });
}

CUresult cuMemPoolImportPointer(PFN_cuMemPoolImportPointer_v11020 real, CUdeviceptr* dptr,
                                CUmemoryPool pool, CUmemPoolPtrExportData* data) {
    return traced_import(Api::cuMemPoolImportPointer, dptr, 0,
                         [&] { return real(dptr, pool, data); });
}

CUresult cuExternalMemoryGetMappedBuffer(PFN_cuExternalMemoryGetMappedBuffer_v10000 real,
                                         CUdeviceptr* dptr, CUexternalMemory mem,
                                         const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* desc) {
    return traced_import(Api::cuExternalMemoryGetMappedBuffer, dptr, desc ? desc->size : 0,
                         [&] { return real(dptr, mem, desc); });
}

// Host registration page-locks the program's own memory: recorded as host_registered, paired with
// cuMemHostUnregister by address.
CUresult cuMemHostRegister_v2(PFN_cuMemHostRegister_v6050 real, void* p, size_t bytesize,
                              unsigned int flags) {
    HookGuard guard;
    CUresult r = real(p, bytesize, flags);
    if (guard.nested()) return r;
    Api api = api_or_runtime(Api::cuMemHostRegister_v2);
    if (r == CUDA_SUCCESS)
        recorder::alloc(api, MemKind::HostRegistered, -1, reinterpret_cast<uint64_t>(p), bytesize);
    else
        recorder::alloc_failed(api, MemKind::HostRegistered, -1, bytesize, r, 0, 0);
    return r;
}

CUresult cuMemHostUnregister(PFN_cuMemHostUnregister_v4000 real, void* p) {
    return traced_free(Api::cuMemHostUnregister, Space::Host, reinterpret_cast<uint64_t>(p),
                       [&] { return real(p); });
}

// The resolvers record nothing: they hand out wrappers for the exact variant the driver returned.
CUresult cuGetProcAddress(PFN_cuGetProcAddress_v11030 real, const char* symbol, void** pfn,
                          int version, cuuint64_t flags) {
    CUresult r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn && symbol && *symbol)
        *pfn = route_driver_pointer(symbol, version, flags, *pfn);
    return r;
}

CUresult cuGetProcAddress_v2(PFN_cuGetProcAddress_v12000 real, const char* symbol, void** pfn,
                             int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn && *pfn && symbol && *symbol &&
        (!status || *status == CU_GET_PROC_ADDRESS_SUCCESS))
        *pfn = route_driver_pointer(symbol, version, flags, *pfn);
    return r;
}

} // namespace gpuleak::hooks::impl
