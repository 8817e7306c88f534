// Which sites are PyTorch caching-allocator segments: the verdicts read those differently
// (analysis/verdicts.h), so a tensor taken for a segment would lose its leak.
#include <gtest/gtest.h>

#include "model/site_table.h"

namespace gpuleak::analyzer {
namespace {

Site with_frames(std::initializer_list<std::pair<const char*, const char*>> functions_files) {
    Site s;
    for (auto [function, file] : functions_files) {
        Frame f;
        f.function = function;
        f.file = file;
        s.frames.push_back(f);
    }
    return s;
}

TEST(Site, IsACachingAllocatorSegmentOnlyUnderItsNativeBackend) {
    EXPECT_TRUE(with_frames({{"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::"
                              "malloc(signed char, unsigned long, CUstream_st*)",
                              "CUDACachingAllocator.cpp"},
                             {"forward", "model.py"}})
                    .from_caching_allocator());
    // fake_torch's emulation, named by its file.
    EXPECT_TRUE(
        with_frames({{"CachingAllocator._new_segment", "fake_torch/CUDACachingAllocator.py"}})
            .from_caching_allocator());
    // `--per-tensor`: PyTorch's cudaMallocAsync backend, in the same namespace.
    EXPECT_FALSE(with_frames({{"c10::cuda::CUDACachingAllocator::CudaMallocAsync::mallocAsync("
                               "void**, signed char, unsigned long, CUstream_st*)",
                               "CUDAMallocAsyncAllocator.cpp"},
                              {"c10::cuda::CUDACachingAllocator::CudaMallocAsync::"
                               "CudaMallocAsyncAllocator::malloc(void**, signed char, unsigned "
                               "long, CUstream_st*)",
                               "CUDAMallocAsyncAllocator.cpp"}})
                     .from_caching_allocator());
    EXPECT_FALSE(with_frames({{"at::empty", "TensorFactories.cpp"}, {"forward", "model.py"}})
                     .from_caching_allocator());
}

} // namespace
} // namespace gpuleak::analyzer
