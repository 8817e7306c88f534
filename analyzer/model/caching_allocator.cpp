#include "model/caching_allocator.h"

#include <algorithm>

#include "common/text_search.h"
#include "model/site_table.h"

namespace gpuleak::analyzer {

bool in_caching_allocator(const std::vector<Frame>& frames) {
    bool caching = false;
    for (const Frame& f : frames) {
        if (contains_lowercase(f.function, "cudamallocasync")) return false;
        caching = caching || contains_lowercase(f.function, "cudacachingallocator") ||
                  contains_lowercase(f.file, "cudacachingallocator");
    }
    return caching;
}

TorchAllocator pytorch_allocator(const ProcessInfo& process) {
    for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"})
        if (contains_lowercase(process.env_value(name), "backend:cudamallocasync"))
            return TorchAllocator::MallocAsync;
    const std::string uncached = process.env_value("PYTORCH_NO_CUDA_MEMORY_CACHING");
    if (!uncached.empty() && uncached != "0") return TorchAllocator::Uncached;
    return TorchAllocator::Caching;
}

bool in_host_caching_allocator(const std::vector<Frame>& frames) {
    return std::any_of(frames.begin(), frames.end(), [](const Frame& f) {
        return contains_lowercase(f.function, "cachinghostallocator") ||
               contains_lowercase(f.file, "cachinghostallocator");
    });
}

CachedBlock cached_block(const std::vector<Frame>& frames, bool device_cache_on) {
    if (in_host_caching_allocator(frames)) return CachedBlock::PinnedHost;
    if (device_cache_on && in_caching_allocator(frames)) return CachedBlock::DeviceSegment;
    return CachedBlock::None;
}

} // namespace gpuleak::analyzer
