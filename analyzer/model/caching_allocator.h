// PyTorch's caching allocators, as the driver sees them: segments of device memory that whichever
// tensor found the cache full asked for, kept until torch.cuda.empty_cache(), and blocks of pinned
// host memory (Tensor.pin_memory(), DataLoader(pin_memory=True)) kept per power-of-two size; both
// reused unseen. The verdicts read such sites differently (analysis/verdicts.h), so a tensor taken
// for a cache's block would lose its leak.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

struct Frame;

enum class CachedBlock : uint8_t {
    None,          // the program's own buffer (a tensor, with PyTorch's cache off)
    DeviceSegment, // c10::cuda::CUDACachingAllocator's
    PinnedHost,    // at::cuda::CachingHostAllocator's
};

// The frames pass through c10::cuda::CUDACachingAllocator (fake_torch's emulation: its file), and
// not through its cudaMallocAsync backend, which lives in that namespace and allocates per tensor.
bool in_caching_allocator(const std::vector<Frame>& frames);

// How the process's environment set PyTorch's device allocator: caching (the default), the
// cudaMallocAsync backend in PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF, or
// PYTORCH_NO_CUDA_MEMORY_CACHING (each tensor a cudaMalloc of its own, still called from the
// caching allocator's code). The backend is named first where both are set.
enum class TorchAllocator : uint8_t { Caching, MallocAsync, Uncached };
TorchAllocator pytorch_allocator(const ProcessInfo& process);
inline bool pytorch_caches(const ProcessInfo& process) {
    return pytorch_allocator(process) == TorchAllocator::Caching;
}

// The frames pass through at::cuda::CachingHostAllocator (fake_torch's emulation: its file), which
// caches whatever the environment says of the device allocator.
bool in_host_caching_allocator(const std::vector<Frame>& frames);

// What a site's frames allocate, in a process whose device allocator caches or not.
CachedBlock cached_block(const std::vector<Frame>& frames, bool device_cache_on);

} // namespace gpuleak::analyzer
