#include "model/caching_allocator.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "model/site_table.h"

namespace gpuleak::analyzer {
namespace {

// `needle` in lower case.
bool has(std::string_view text, std::string_view needle) {
    return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == b;
           }) != text.end();
}

} // namespace

bool in_caching_allocator(const std::vector<Frame>& frames) {
    bool caching = false;
    for (const Frame& f : frames) {
        if (has(f.function, "cudamallocasync")) return false;
        caching = caching || has(f.function, "cudacachingallocator") ||
                  has(f.file, "cudacachingallocator");
    }
    return caching;
}

bool pytorch_caches(const ProcessInfo& process) {
    const std::string uncached = process.env_value("PYTORCH_NO_CUDA_MEMORY_CACHING");
    if (!uncached.empty() && uncached != "0") return false;
    for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"})
        if (has(process.env_value(name), "backend:cudamallocasync")) return false;
    return true;
}

bool in_host_caching_allocator(const std::vector<Frame>& frames) {
    return std::any_of(frames.begin(), frames.end(), [](const Frame& f) {
        return has(f.function, "cachinghostallocator") || has(f.file, "cachinghostallocator");
    });
}

CachedBlock cached_block(const std::vector<Frame>& frames, bool device_cache_on) {
    if (in_host_caching_allocator(frames)) return CachedBlock::PinnedHost;
    if (device_cache_on && in_caching_allocator(frames)) return CachedBlock::DeviceSegment;
    return CachedBlock::None;
}

} // namespace gpuleak::analyzer
