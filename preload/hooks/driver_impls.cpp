#include "hooks/driver_impls.h"

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

CUresult cuMemAllocAsync(PFN_cuMemAllocAsync_v11020 real, CUdeviceptr* dptr, size_t bytesize,
                         CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocAsync, MemKind::Device, current_device(), bytesize, stream,
        [&] { return real(dptr, bytesize, stream); }, dptr);
}

CUresult cuMemAllocAsync_ptsz(PFN_cuMemAllocAsync_v11020_ptsz real, CUdeviceptr* dptr,
                              size_t bytesize, CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocAsync_ptsz, MemKind::Device, current_device(), bytesize, stream,
        [&] { return real(dptr, bytesize, stream); }, dptr);
}

CUresult cuMemAllocFromPoolAsync(PFN_cuMemAllocFromPoolAsync_v11020 real, CUdeviceptr* dptr,
                                 size_t bytesize, CUmemoryPool pool, CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocFromPoolAsync, MemKind::Device, current_device(), bytesize, stream,
        [&] { return real(dptr, bytesize, pool, stream); }, dptr);
}

CUresult cuMemAllocFromPoolAsync_ptsz(PFN_cuMemAllocFromPoolAsync_v11020_ptsz real,
                                      CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream stream) {
    return traced_alloc(
        Api::cuMemAllocFromPoolAsync_ptsz, MemKind::Device, current_device(), bytesize, stream,
        [&] { return real(dptr, bytesize, pool, stream); }, dptr);
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
