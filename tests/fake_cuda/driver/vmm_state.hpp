// Virtual memory management (cuMemCreate / cuMemMap family) bookkeeping.
//
// Physical allocations are reference counted (create, retain: +1; release: -1) and tracked per
// mapping; the bytes return to the device only when the count is 0 AND nothing maps them any more,
// which is what makes NCCL's Retain -> Release -> Unmap -> Release sequence legal.
#pragma once

#include "cuda_api.hpp"

#include <cstddef>

namespace fakecuda {

// Real drivers report 2 MiB for device memory; sizes and addresses must be multiples of it.
inline constexpr std::size_t kVmmGranularity = std::size_t{2} << 20;

CUresult vmm_create(CUmemGenericAllocationHandle* handle, std::size_t bytes,
                    const CUmemAllocationProp* prop) noexcept;
CUresult vmm_release(CUmemGenericAllocationHandle handle) noexcept;
CUresult vmm_retain(CUmemGenericAllocationHandle* handle, CUdeviceptr address) noexcept;

CUresult vmm_reserve(CUdeviceptr* address, std::size_t bytes, std::size_t alignment) noexcept;
CUresult vmm_address_free(CUdeviceptr address, std::size_t bytes) noexcept;

CUresult vmm_map(CUdeviceptr address, std::size_t bytes, std::size_t offset,
                 CUmemGenericAllocationHandle handle) noexcept;
CUresult vmm_unmap(CUdeviceptr address, std::size_t bytes) noexcept;
// The mapping that contains address: its start, size and device (-1 for host memory). False when
// none does.
bool vmm_mapping_of(CUdeviceptr address, CUdeviceptr* start, std::size_t* bytes,
                    int* device) noexcept;
// CUDA_SUCCESS only when [address, address + bytes) is entirely mapped.
CUresult vmm_check_mapped(CUdeviceptr address, std::size_t bytes) noexcept;

// CUDA_ERROR_INVALID_VALUE for a property the fake (or the driver) would reject.
CUresult vmm_check_prop(const CUmemAllocationProp* prop) noexcept;

} // namespace fakecuda
