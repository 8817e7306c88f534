// Exported entry points for stream-ordered allocation, in the legacy-stream and the per-thread
// (_ptsz) flavours. Each flavour is its own exported function, as in the real driver, so a tracer
// that routes by the pointer it was given can be checked for picking the right one.
#include "call_log.hpp"
#include "call_names.hpp"
#include "device_state.hpp"
#include "linear_memory.hpp"
#include "pools.hpp"
#include "streams.hpp"

#include <cstdint>

using fakecuda::Call;
using fakecuda::call_id;
using fakecuda::Kind;
using fakecuda::mask;

namespace {

// Streams are accepted but not modelled: work is complete as soon as it is issued.
CUresult alloc_async(CUdeviceptr* dptr, std::size_t bytes, int device) {
    if (const CUresult rc = fakecuda::init_status(); rc != CUDA_SUCCESS) return rc;
    if (dptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    std::uintptr_t address = 0;
    const CUresult rc = fakecuda::allocate(Kind::device, device, bytes, false, &address);
    if (rc == CUDA_SUCCESS) *dptr = address;
    return rc;
}

CUresult alloc_from_pool(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool) {
    if (const CUresult rc = fakecuda::init_status(); rc != CUDA_SUCCESS) return rc;
    const int device = fakecuda::pool_device(pool);
    if (device < 0) return CUDA_ERROR_INVALID_VALUE;
    return alloc_async(dptr, bytes, device);
}

CUresult free_async(CUdeviceptr dptr) {
    if (const CUresult rc = fakecuda::init_status(); rc != CUDA_SUCCESS) return rc;
    if (dptr == 0) return CUDA_SUCCESS;
    return fakecuda::release(dptr, mask(Kind::device) | mask(Kind::imported));
}

CUdeviceptr value_or_zero(CUresult rc, const CUdeviceptr* dptr) {
    return rc == CUDA_SUCCESS ? *dptr : 0;
}

} // namespace

// On a stream that is capturing, the allocation becomes a mem-alloc node of the captured graph
// (graph memory), as on the real driver; the free likewise becomes a mem-free node.
static CUresult alloc_or_capture(CUdeviceptr* dptr, std::size_t bytes, CUstream stream,
                                 bool per_thread) {
    if (fakecuda::init_status() == CUDA_SUCCESS && fakecuda::stream_capturing(stream, per_thread))
        return fakecuda::graph_alloc(stream, per_thread, dptr, bytes);
    return alloc_async(dptr, bytes, fakecuda::current_device());
}

static CUresult free_or_capture(CUdeviceptr dptr, CUstream stream, bool per_thread) {
    if (fakecuda::init_status() == CUDA_SUCCESS && fakecuda::stream_capturing(stream, per_thread))
        return fakecuda::graph_free(stream, per_thread, dptr);
    return free_async(dptr);
}

CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
    const Call call{call_id("cuMemAllocAsync")};
    const CUresult rc = alloc_or_capture(dptr, bytesize, hStream, false);
    return call.done(rc, "bytesize=%zu, hStream=%p, *dptr=0x%llx", bytesize,
                     static_cast<void*>(hStream), value_or_zero(rc, dptr));
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
    const Call call{call_id("cuMemAllocAsync_ptsz")};
    const CUresult rc = alloc_or_capture(dptr, bytesize, hStream, true);
    return call.done(rc, "bytesize=%zu, hStream=%p, *dptr=0x%llx", bytesize,
                     static_cast<void*>(hStream), value_or_zero(rc, dptr));
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream) {
    const Call call{call_id("cuMemAllocFromPoolAsync")};
    const CUresult rc = alloc_from_pool(dptr, bytesize, pool);
    return call.done(rc, "bytesize=%zu, pool=%p, hStream=%p, *dptr=0x%llx", bytesize,
                     static_cast<void*>(pool), static_cast<void*>(hStream),
                     value_or_zero(rc, dptr));
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream) {
    const Call call{call_id("cuMemAllocFromPoolAsync_ptsz")};
    const CUresult rc = alloc_from_pool(dptr, bytesize, pool);
    return call.done(rc, "bytesize=%zu, pool=%p, hStream=%p, *dptr=0x%llx", bytesize,
                     static_cast<void*>(pool), static_cast<void*>(hStream),
                     value_or_zero(rc, dptr));
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
    const Call call{call_id("cuMemFreeAsync")};
    return call.done(free_or_capture(dptr, hStream, false), "dptr=0x%llx, hStream=%p", dptr,
                     static_cast<void*>(hStream));
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
    const Call call{call_id("cuMemFreeAsync_ptsz")};
    return call.done(free_or_capture(dptr, hStream, true), "dptr=0x%llx, hStream=%p", dptr,
                     static_cast<void*>(hStream));
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
    const Call call{call_id("cuDeviceGetDefaultMemPool")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && pool_out == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && !fakecuda::valid_device(dev)) rc = CUDA_ERROR_INVALID_DEVICE;
    if (rc == CUDA_SUCCESS) *pool_out = fakecuda::default_pool(dev);
    return call.done(rc, "dev=%d, *pool_out=%p", dev,
                     rc == CUDA_SUCCESS ? static_cast<void*>(*pool_out) : nullptr);
}

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
    const Call call{call_id("cuMemPoolCreate")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS) rc = fakecuda::create_pool(pool, poolProps);
    return call.done(rc, "*pool=%p", rc == CUDA_SUCCESS ? static_cast<void*>(*pool) : nullptr);
}

CUresult cuMemPoolDestroy(CUmemoryPool pool) {
    const Call call{call_id("cuMemPoolDestroy")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS) rc = fakecuda::destroy_pool(pool);
    return call.done(rc, "pool=%p", static_cast<void*>(pool));
}
