#include "hooks/libcuda_queries.h"

#include <dlfcn.h>

#include <atomic>

#include "hooks/real_symbols.h"

namespace gpuleak::hooks {
namespace {

using CtxGetDevice = PFN_cuCtxGetDevice_v2000;
using MemGetInfo = PFN_cuMemGetInfo_v3020;
using StreamIsCapturing = PFN_cuStreamIsCapturing_v10000;

template <typename Fn> Fn lookup(std::atomic<void*>& cache, const char* name) {
    void* p = cache.load(std::memory_order_acquire);
    if (!p) {
        p = next_definition(name, "libcuda.so");
        if (p) cache.store(p, std::memory_order_release);
    }
    return reinterpret_cast<Fn>(p);
}

std::atomic<void*> g_ctx_get_device{nullptr};
std::atomic<void*> g_mem_get_info{nullptr};
std::atomic<void*> g_stream_is_capturing{nullptr};
std::atomic<void*> g_address_range{nullptr};

} // namespace

int current_device() {
    auto fn = lookup<CtxGetDevice>(g_ctx_get_device, "cuCtxGetDevice");
    CUdevice device = -1;
    if (!fn || fn(&device) != CUDA_SUCCESS) return -1;
    return device;
}

MemInfo query_mem_info(CUstream stream) {
    // The legacy and per-thread default streams cannot be capturing; asking about them while
    // another stream captures is itself an error, so only ask about real streams.
    bool special = stream == nullptr || stream == stream_legacy() || stream == stream_per_thread();
    if (!special) {
        auto capturing = lookup<StreamIsCapturing>(g_stream_is_capturing, "cuStreamIsCapturing");
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        if (!capturing || capturing(stream, &status) != CUDA_SUCCESS ||
            status != CU_STREAM_CAPTURE_STATUS_NONE)
            return {};
    }
    auto info = lookup<MemGetInfo>(g_mem_get_info, "cuMemGetInfo_v2");
    size_t free = 0, total = 0;
    if (!info || info(&free, &total) != CUDA_SUCCESS) return {};
    return {free, total};
}

bool stream_capturing(CUstream stream, bool per_thread) {
    // The legacy stream never captures (and asking about it while another stream captures is an
    // error); 0 means the per-thread default stream to a _ptsz entry point, which can capture.
    if (stream == nullptr && per_thread) stream = stream_per_thread();
    if (stream == nullptr || stream == stream_legacy()) return false;
    auto capturing = lookup<StreamIsCapturing>(g_stream_is_capturing, "cuStreamIsCapturing");
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return capturing && capturing(stream, &status) == CUDA_SUCCESS &&
           status != CU_STREAM_CAPTURE_STATUS_NONE;
}

uint64_t allocation_size(CUdeviceptr address) {
    using AddressRange = PFN_cuMemGetAddressRange_v3020;
    auto range = lookup<AddressRange>(g_address_range, "cuMemGetAddressRange_v2");
    CUdeviceptr base = 0;
    size_t size = 0;
    if (!range || range(&base, &size, address) != CUDA_SUCCESS) return 0;
    return size;
}

} // namespace gpuleak::hooks
