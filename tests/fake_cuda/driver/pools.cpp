#include "pools.hpp"

#include "config.hpp"
#include "device_state.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace fakecuda {
namespace {

// Distinct, stable, never-dereferenced addresses to hand out as default-pool handles.
char g_default_pool_tokens[kMaxDevices];

struct Pools {
    std::mutex mutex;
    std::map<CUmemoryPool, std::unique_ptr<char>> created; // the char is the handle's identity
    std::map<CUmemoryPool, int> device;
};

Pools& pools() {
    static Pools p;
    return p;
}

} // namespace

CUmemoryPool default_pool(int device) noexcept {
    return reinterpret_cast<CUmemoryPool>(&g_default_pool_tokens[device]);
}

CUresult create_pool(CUmemoryPool* pool, const CUmemPoolProps* props) noexcept {
    if (pool == nullptr || props == nullptr || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_NOT_SUPPORTED;
    if (!valid_device(props->location.id)) return CUDA_ERROR_INVALID_DEVICE;
    auto identity = std::make_unique<char>();
    const auto handle = reinterpret_cast<CUmemoryPool>(identity.get());
    Pools& p = pools();
    const std::lock_guard lock(p.mutex);
    p.created.emplace(handle, std::move(identity));
    p.device.emplace(handle, props->location.id);
    *pool = handle;
    return CUDA_SUCCESS;
}

CUresult destroy_pool(CUmemoryPool pool) noexcept {
    Pools& p = pools();
    const std::lock_guard lock(p.mutex);
    if (p.created.erase(pool) == 0) return CUDA_ERROR_INVALID_VALUE;
    p.device.erase(pool);
    return CUDA_SUCCESS;
}

int pool_device(CUmemoryPool pool) noexcept {
    for (int d = 0; d < config().devices; ++d)
        if (pool == default_pool(d)) return d;
    Pools& p = pools();
    const std::lock_guard lock(p.mutex);
    const auto it = p.device.find(pool);
    return it == p.device.end() ? -1 : it->second;
}

} // namespace fakecuda
