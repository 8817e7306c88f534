// Exported entry points for initialisation, devices and contexts.
#include "call_log.hpp"
#include "call_names.hpp"
#include "config.hpp"
#include "device_state.hpp"

#include <cstdio>

using fakecuda::Call;
using fakecuda::call_id;

CUresult cuInit(unsigned int Flags) {
    const Call call{call_id("cuInit")};
    const CUresult rc = Flags != 0 ? CUDA_ERROR_INVALID_VALUE : fakecuda::initialize();
    return call.done(rc, "Flags=%u", Flags);
}

CUresult cuDriverGetVersion(int* driverVersion) {
    const Call call{call_id("cuDriverGetVersion")};
    if (driverVersion == nullptr) return call.done(CUDA_ERROR_INVALID_VALUE, "driverVersion=NULL");
    *driverVersion = CUDA_VERSION;
    return call.done(CUDA_SUCCESS, "*driverVersion=%d", *driverVersion);
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    const Call call{call_id("cuDeviceGet")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && device == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && !fakecuda::valid_device(ordinal)) rc = CUDA_ERROR_INVALID_DEVICE;
    if (rc == CUDA_SUCCESS) *device = ordinal;
    return call.done(rc, "ordinal=%d", ordinal);
}

CUresult cuDeviceGetCount(int* count) {
    const Call call{call_id("cuDeviceGetCount")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && count == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) *count = fakecuda::device_count();
    return call.done(rc, "*count=%d", rc == CUDA_SUCCESS ? *count : -1);
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
    const Call call{call_id("cuDeviceGetName")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && (name == nullptr || len <= 0)) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && !fakecuda::valid_device(dev)) rc = CUDA_ERROR_INVALID_DEVICE;
    if (rc == CUDA_SUCCESS)
        std::snprintf(name, static_cast<std::size_t>(len), "Fake CUDA Device %d", dev);
    return call.done(rc, "dev=%d", dev);
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
    const Call call{call_id("cuDeviceTotalMem_v2")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && bytes == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && !fakecuda::valid_device(dev)) rc = CUDA_ERROR_INVALID_DEVICE;
    if (rc == CUDA_SUCCESS) *bytes = fakecuda::config().capacity;
    return call.done(rc, "dev=%d", dev);
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
    const Call call{call_id("cuCtxGetCurrent")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && pctx == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) *pctx = fakecuda::primary_context(fakecuda::current_device());
    return call.done(rc, "*pctx=%p", rc == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr);
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    const Call call{call_id("cuCtxSetCurrent")};
    CUresult rc = fakecuda::init_status();
    // Unbinding (NULL) falls back to device 0 rather than "no context": the fake keeps every thread
    // on some device so cuCtxGetDevice never fails.
    const int device = ctx == nullptr ? 0 : fakecuda::device_of_context(ctx);
    if (rc == CUDA_SUCCESS && device < 0) rc = CUDA_ERROR_INVALID_CONTEXT;
    if (rc == CUDA_SUCCESS) fakecuda::set_current_device(device);
    return call.done(rc, "ctx=%p", static_cast<void*>(ctx));
}

CUresult cuCtxGetDevice(CUdevice* device) {
    const Call call{call_id("cuCtxGetDevice")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && device == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) *device = fakecuda::current_device();
    return call.done(rc, "*device=%d", rc == CUDA_SUCCESS ? *device : -1);
}

CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
    const Call call{call_id("cuCtxGetDevice_v2")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && device == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    const int of_ctx =
        ctx == nullptr ? fakecuda::current_device() : fakecuda::device_of_context(ctx);
    if (rc == CUDA_SUCCESS && of_ctx < 0) rc = CUDA_ERROR_INVALID_CONTEXT;
    if (rc == CUDA_SUCCESS) *device = of_ctx;
    return call.done(rc, "ctx=%p, *device=%d", static_cast<void*>(ctx),
                     rc == CUDA_SUCCESS ? *device : -1);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    const Call call{call_id("cuDevicePrimaryCtxRetain")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && pctx == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && !fakecuda::valid_device(dev)) rc = CUDA_ERROR_INVALID_DEVICE;
    if (rc == CUDA_SUCCESS) {
        *pctx = fakecuda::primary_context(dev);
        // Simplification the tests rely on: retaining also selects the device for this thread.
        fakecuda::set_current_device(dev);
    }
    return call.done(rc, "dev=%d", dev);
}

namespace {

// Primary contexts are never torn down in the fake, so no allocation is ever freed implicitly.
CUresult release_primary(CUdevice dev) {
    const CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && !fakecuda::valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    return rc;
}

} // namespace

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
    const Call call{call_id("cuDevicePrimaryCtxRelease")};
    return call.done(release_primary(dev), "dev=%d", dev);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    const Call call{call_id("cuDevicePrimaryCtxRelease_v2")};
    return call.done(release_primary(dev), "dev=%d", dev);
}
