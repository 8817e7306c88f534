// Which sites are blocks of PyTorch's caching allocators (model/caching_allocator.h): the verdicts
// read those differently (analysis/verdicts.h), so a tensor taken for a cache's block would lose
// its leak.
#include <gtest/gtest.h>

#include "model/caching_allocator.h"
#include "model/site_table.h"

namespace gpuleak::analyzer {
namespace {

std::vector<Frame> frames(std::initializer_list<std::pair<const char*, const char*>> functions) {
    std::vector<Frame> out;
    for (auto [function, file] : functions) {
        Frame f;
        f.function = function;
        f.file = file;
        out.push_back(f);
    }
    return out;
}

TEST(CachingAllocator, SegmentsAreAskedForThroughItsNativeBackend) {
    EXPECT_TRUE(in_caching_allocator(
        frames({{"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed "
                 "char, unsigned long, CUstream_st*)",
                 "CUDACachingAllocator.cpp"},
                {"forward", "model.py"}})));
    // fake_torch's emulation, named by its file.
    EXPECT_TRUE(in_caching_allocator(
        frames({{"CachingAllocator._new_segment", "fake_torch/CUDACachingAllocator.py"}})));
    // `--per-tensor`: PyTorch's cudaMallocAsync backend, in the same namespace.
    EXPECT_FALSE(in_caching_allocator(
        frames({{"c10::cuda::CUDACachingAllocator::CudaMallocAsync::mallocAsync(void**, signed "
                 "char, unsigned long, CUstream_st*)",
                 "CUDAMallocAsyncAllocator.cpp"},
                {"c10::cuda::CUDACachingAllocator::CudaMallocAsync::CudaMallocAsyncAllocator::"
                 "malloc(void**, signed char, unsigned long, CUstream_st*)",
                 "CUDAMallocAsyncAllocator.cpp"}})));
    EXPECT_FALSE(in_caching_allocator(
        frames({{"at::empty", "TensorFactories.cpp"}, {"forward", "model.py"}})));
}

// Without caching, PyTorch still allocates from the caching allocator's code, one cudaMalloc per
// tensor: the process's environment tells.
TEST(CachingAllocator, IsOffWhereTheEnvironmentTurnsCachingOff) {
    ProcessInfo p;
    EXPECT_TRUE(pytorch_caches(p));
    p.env = {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"};
    EXPECT_TRUE(pytorch_caches(p));
    p.env = {"PYTORCH_NO_CUDA_MEMORY_CACHING=0"};
    EXPECT_TRUE(pytorch_caches(p));
    p.env = {"PYTORCH_NO_CUDA_MEMORY_CACHING=1"};
    EXPECT_FALSE(pytorch_caches(p));
    p.env = {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,backend:cudaMallocAsync"};
    EXPECT_FALSE(pytorch_caches(p));
    p.env = {"PYTORCH_ALLOC_CONF=backend:cudaMallocAsync"};
    EXPECT_FALSE(pytorch_caches(p));
    // The report's note names the same mode as the verdicts read.
    EXPECT_EQ(pytorch_allocator(p), TorchAllocator::MallocAsync);
    p.env = {"PYTORCH_NO_CUDA_MEMORY_CACHING=true"};
    EXPECT_EQ(pytorch_allocator(p), TorchAllocator::Uncached);
    p.env = {"PYTORCH_NO_CUDA_MEMORY_CACHING=1", "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync"};
    EXPECT_EQ(pytorch_allocator(p), TorchAllocator::MallocAsync);
    p.env = {};
    EXPECT_EQ(pytorch_allocator(p), TorchAllocator::Caching);
}

// Tensor.pin_memory() and DataLoader(pin_memory=True): the host allocator caches whatever the
// environment says of the device's, and is told from it by name.
TEST(CachingAllocator, PinnedBlocksAreTheHostCachesWhateverTheDeviceCacheDoes) {
    const std::vector<Frame> pinned = frames(
        {{"at::cuda::(anonymous namespace)::CUDACachingHostAllocatorImpl::allocate_host_memory("
          "unsigned long, void**)",
          "aten/src/ATen/cuda/CachingHostAllocator.cpp"},
         {"at::CachingHostAllocatorImpl<c10::cuda::CUDAStream, at::cuda::EventPool::Event, "
          "at::HostBlock<c10::cuda::CUDAStream>, at::HostStats>::allocate(unsigned long)",
          "aten/src/ATen/core/CachingHostAllocator.h"},
         {"pin_memory", "torch/utils/data/_utils/pin_memory.py"}});
    EXPECT_TRUE(in_host_caching_allocator(pinned));
    EXPECT_FALSE(in_caching_allocator(pinned));
    EXPECT_EQ(cached_block(pinned, true), CachedBlock::PinnedHost);
    EXPECT_EQ(cached_block(pinned, false), CachedBlock::PinnedHost);
    // fake_torch's emulation, named by its file.
    EXPECT_EQ(cached_block(frames({{"CachingHostAllocator.malloc",
                                    "site-packages/fake_torch/CachingHostAllocator.py"}}),
                           false),
              CachedBlock::PinnedHost);
    const std::vector<Frame> segment = frames(
        {{"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, "
          "unsigned long, CUstream_st*)",
          "CUDACachingAllocator.cpp"}});
    EXPECT_EQ(cached_block(segment, true), CachedBlock::DeviceSegment);
    EXPECT_EQ(cached_block(segment, false), CachedBlock::None);
    // cudaHostAlloc from the program's own code is its own buffer.
    EXPECT_EQ(cached_block(frames({{"cudaHostAlloc", ""}, {"main", "app.cpp"}}), true),
              CachedBlock::None);
}

} // namespace
} // namespace gpuleak::analyzer
