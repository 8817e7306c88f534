#include "device_state.hpp"

#include "config.hpp"

#include <atomic>

namespace fakecuda {
namespace {

std::atomic<bool> g_initialized{false};
thread_local int t_current_device = 0;

// Distinct, stable, never-dereferenced addresses to hand out as CUcontext.
char g_context_tokens[kMaxDevices];

} // namespace

CUresult init_status() noexcept {
    return g_initialized.load(std::memory_order_acquire) ? CUDA_SUCCESS
                                                         : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult initialize() noexcept {
    if (config().devices == 0) return CUDA_ERROR_NO_DEVICE;
    g_initialized.store(true, std::memory_order_release);
    return CUDA_SUCCESS;
}

int device_count() noexcept {
    return config().devices;
}

bool valid_device(int device) noexcept {
    return device >= 0 && device < config().devices;
}

int current_device() noexcept {
    return t_current_device;
}

void set_current_device(int device) noexcept {
    t_current_device = device;
}

CUcontext primary_context(int device) noexcept {
    return reinterpret_cast<CUcontext>(&g_context_tokens[device]);
}

int device_of_context(CUcontext ctx) noexcept {
    for (int d = 0; d < config().devices; ++d)
        if (ctx == primary_context(d)) return d;
    return -1;
}

} // namespace fakecuda
