// Exported device, version and synchronisation entry points.
#include "invoke.hpp"

using fakecudart::DriverTable;
using fakecudart::finish;
using fakecudart::invoke;

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return finish(cudaErrorInvalidValue);
    const cudaError_t e = invoke(&DriverTable::cuDeviceGetCount, count);
    if (e != cudaSuccess) *count = 0;
    return finish(e);
}

cudaError_t cudaSetDevice(int device) {
    int count = 0;
    if (const cudaError_t e = invoke(&DriverTable::cuDeviceGetCount, &count); e != cudaSuccess)
        return finish(e);
    if (device < 0 || device >= count) return finish(cudaErrorInvalidDevice);
    // What cudart does on a device switch: retain that device's primary context, make it current.
    CUcontext ctx = nullptr;
    if (const cudaError_t e = invoke(&DriverTable::cuDevicePrimaryCtxRetain, &ctx, device);
        e != cudaSuccess)
        return finish(e);
    return finish(invoke(&DriverTable::cuCtxSetCurrent, ctx));
}

cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return finish(cudaErrorInvalidValue);
    return finish(invoke(&DriverTable::cuCtxGetDevice, device));
}

cudaError_t cudaDeviceSynchronize(void) {
    // Nothing is ever pending in the fake; only an unusable driver is worth reporting.
    return finish(fakecudart::driver().status);
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
    if (driverVersion == nullptr) return finish(cudaErrorInvalidValue);
    // As documented for cudart: 0, and success, when no usable driver is installed.
    if (invoke(&DriverTable::cuDriverGetVersion, driverVersion) != cudaSuccess) *driverVersion = 0;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
    if (runtimeVersion == nullptr) return finish(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
    if (memPool == nullptr) return finish(cudaErrorInvalidValue);
    // cudaMemPool_t and CUmemoryPool are the same opaque type.
    return finish(invoke(&DriverTable::cuDeviceGetDefaultMemPool, memPool, device));
}
