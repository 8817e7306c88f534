// Linear allocations (everything that is not VMM) emulated with host memory, so every pointer is a
// real, unique address and a freed address comes back the way it does from a real allocator.
#pragma once

#include "cuda_api.hpp"

#include <cstddef>
#include <cstdint>

namespace fakecuda {

// array: CUDA arrays (device memory, charged like it); imported: memory of another process or API
// mapped here (IPC, pool import, external memory), never charged to this process.
enum class Kind : unsigned { device = 1, managed = 2, host_pinned = 4, array = 8, imported = 16 };

// Which kinds a free entry point accepts; anything else is CUDA_ERROR_INVALID_VALUE.
using KindMask = unsigned;
constexpr KindMask mask(Kind k) {
    return static_cast<KindMask>(k);
}

// low32: place the block below 4 GiB, because the legacy (pre-3.2) ABI returns a 32-bit pointer.
// On failure *out is not written.
CUresult allocate(Kind kind, int device, std::size_t bytes, bool low32,
                  std::uintptr_t* out) noexcept;

// 0 is not special here; callers decide what a null free means.
CUresult release(std::uintptr_t address, KindMask accepted) noexcept;

// The live block containing `address`: its kind, device, start and size. False when none does.
bool lookup(std::uintptr_t address, Kind* kind, int* device, std::uintptr_t* base,
            std::size_t* bytes) noexcept;

} // namespace fakecuda
