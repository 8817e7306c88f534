// PyTorch's caching allocator, as the driver sees it: segments that whichever tensor found the
// cache full asked for, kept until torch.cuda.empty_cache(), reused unseen. The verdicts read such
// sites differently (analysis/verdicts.h), so a tensor taken for a segment would lose its leak.
#pragma once

#include <vector>

#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

struct Frame;

// The frames pass through c10::cuda::CUDACachingAllocator (fake_torch's emulation: its file), and
// not through its cudaMallocAsync backend, which lives in that namespace and allocates per tensor.
bool in_caching_allocator(const std::vector<Frame>& frames);

// The process ran PyTorch's allocator caching: neither PYTORCH_NO_CUDA_MEMORY_CACHING (each
// tensor a cudaMalloc of its own, still called from the caching allocator's code) nor the
// cudaMallocAsync backend in PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF.
bool pytorch_caches(const ProcessInfo& process);

} // namespace gpuleak::analyzer
