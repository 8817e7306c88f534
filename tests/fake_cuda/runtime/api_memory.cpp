// Exported allocation entry points. Each one is exactly one driver call through the resolved table,
// so a tracer that records at the driver level sees one record per runtime call.
#include "invoke.hpp"
#include <cstdint>

using fakecudart::DriverTable;
using fakecudart::finish;
using fakecudart::invoke;

namespace {

// The element size NVIDIA's cudart 11.8 and 13.0 pass to cuMemAllocPitch_v2 for cudaMallocPitch
// and cudaMalloc3D (observed: shared/reference/real-cuda-runtime.md).
constexpr unsigned kPitchElementBytes = 4;

CUdeviceptr device_address(const void* p) {
    return reinterpret_cast<CUdeviceptr>(p);
}

// On failure the caller's pointer is left as it was, as the driver leaves *dptr. Callers make the
// driver call in a statement of its own first: as a sibling argument, `address` could be read
// before the call had written it.
cudaError_t store(cudaError_t e, void** out, CUdeviceptr address) {
    if (e == cudaSuccess) *out = reinterpret_cast<void*>(address);
    return finish(e);
}

} // namespace

cudaError_t cudaMalloc(void** devPtr, size_t size) {
    if (devPtr == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    const cudaError_t e = invoke(&DriverTable::cuMemAlloc, &d, size);
    return store(e, devPtr, d);
}

cudaError_t cudaFree(void* devPtr) {
    // cudaFree(NULL) only initialises the runtime; nothing reaches the driver's free.
    if (devPtr == nullptr) return finish(fakecudart::driver().status);
    return finish(invoke(&DriverTable::cuMemFree, device_address(devPtr)));
}

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
    if (devPtr == nullptr || pitch == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    const cudaError_t e =
        invoke(&DriverTable::cuMemAllocPitch, &d, pitch, width, height, kPitchElementBytes);
    return store(e, devPtr, d);
}

// A pitched allocation of height x depth rows, as NVIDIA's runtime makes it.
cudaError_t cudaMalloc3D(cudaPitchedPtr* pitchedDevPtr, cudaExtent extent) {
    if (pitchedDevPtr == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    size_t pitch = 0;
    const cudaError_t e =
        invoke(&DriverTable::cuMemAllocPitch, &d, &pitch, extent.width,
               extent.height * (extent.depth ? extent.depth : 1), kPitchElementBytes);
    if (e == cudaSuccess) {
        pitchedDevPtr->ptr = reinterpret_cast<void*>(static_cast<std::uintptr_t>(d));
        pitchedDevPtr->pitch = pitch;
        pitchedDevPtr->xsize = extent.width;
        pitchedDevPtr->ysize = extent.height;
    }
    return finish(e);
}

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
    if (devPtr == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    // cudaMemAttachGlobal/Host have the values of CU_MEM_ATTACH_GLOBAL/HOST.
    const cudaError_t e = invoke(&DriverTable::cuMemAllocManaged, &d, size, flags);
    return store(e, devPtr, d);
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
    if (ptr == nullptr) return finish(cudaErrorInvalidValue);
    // cudart 13 never queries cuMemAllocHost (real_cudart13_handshake.txt): cudaMallocHost is
    // cuMemHostAlloc.
    return finish(invoke(&DriverTable::cuMemHostAlloc, ptr, size, 0U));
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
    if (pHost == nullptr) return finish(cudaErrorInvalidValue);
    // cudaHostAlloc* flags have the values of CU_MEMHOSTALLOC_*.
    return finish(invoke(&DriverTable::cuMemHostAlloc, pHost, size, flags));
}

cudaError_t cudaFreeHost(void* ptr) {
    if (ptr == nullptr) return finish(fakecudart::driver().status);
    return finish(invoke(&DriverTable::cuMemFreeHost, ptr));
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
    if (free == nullptr || total == nullptr) return finish(cudaErrorInvalidValue);
    return finish(invoke(&DriverTable::cuMemGetInfo, free, total));
}

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
    if (devPtr == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    const cudaError_t e = invoke(&DriverTable::cuMemAllocAsync, &d, size, hStream);
    return store(e, devPtr, d);
}

cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
    if (devPtr == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    const cudaError_t e = invoke(&DriverTable::cuMemAllocAsync_ptsz, &d, size, hStream);
    return store(e, devPtr, d);
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
    return finish(invoke(&DriverTable::cuMemFreeAsync, device_address(devPtr), hStream));
}

cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
    return finish(invoke(&DriverTable::cuMemFreeAsync_ptsz, device_address(devPtr), hStream));
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                    cudaStream_t stream) {
    if (ptr == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    const cudaError_t e = invoke(&DriverTable::cuMemAllocFromPoolAsync, &d, size, memPool, stream);
    return store(e, ptr, d);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                         cudaStream_t stream) {
    if (ptr == nullptr) return finish(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    const cudaError_t e =
        invoke(&DriverTable::cuMemAllocFromPoolAsync_ptsz, &d, size, memPool, stream);
    return store(e, ptr, d);
}
