// Read-only driver queries the hooks make for their records, through real libcuda pointers.
#pragma once

#include <cstdint>

#include "hooks/cuda_api.h"

namespace gpuleak::hooks {

// The calling thread's current device, or -1 without a context.
int current_device();

struct MemInfo {
    uint64_t free = 0; // 0 = unknown
    uint64_t total = 0;
};
// cuMemGetInfo after a failed allocation, skipped when `stream` is being captured into a graph
// (a query there could invalidate the user's capture).
MemInfo query_mem_info(CUstream stream);

// Whether a stream-ordered allocation on `stream` is being captured into a graph (the driver then
// makes it graph memory). `per_thread`: the call came through a _ptsz entry point.
bool stream_capturing(CUstream stream, bool per_thread);

// The size of the allocation `address` starts (cuMemGetAddressRange), 0 when unknown: for mappings
// whose size the call does not name (IPC, pool import).
uint64_t allocation_size(CUdeviceptr address);

} // namespace gpuleak::hooks
