#include "linear_memory.hpp"

#include "accounting.hpp"

#include <cstdlib>
#include <mutex>
#include <sys/mman.h>
#include <unordered_map>

namespace fakecuda {
namespace {

struct Block {
    std::size_t bytes;
    Kind kind;
    int device;
    bool low32;
};

// Sharded by address, so threads that allocate at once rarely meet on a lock: the thread rows of
// bench/ measure the tracer's scaling, not this fake's (a real driver does not serialize them all).
struct alignas(64) Table {
    std::mutex mutex;
    std::unordered_map<std::uintptr_t, Block> blocks;
};

constexpr std::size_t kShards = 64;

Table& table_at(std::size_t shard) {
    static Table shards[kShards];
    return shards[shard];
}

Table& table(std::uintptr_t address) {
    return table_at((address >> 4) * 0x9E3779B97F4A7C15ull >> 58);
}

bool charge(Kind kind, int device, std::size_t bytes) {
    switch (kind) {
    case Kind::device:
        return charge_device(device, bytes);
    case Kind::managed:
        charge_managed(bytes);
        return true;
    case Kind::host_pinned:
        charge_host_pinned(bytes);
        return true;
    case Kind::array:
        return charge_device(device, bytes);
    case Kind::imported:
        return true;
    }
    return false;
}

void credit(const Block& b) {
    switch (b.kind) {
    case Kind::device:
        credit_device(b.device, b.bytes);
        break;
    case Kind::managed:
        credit_managed(b.bytes);
        break;
    case Kind::host_pinned:
        credit_host_pinned(b.bytes);
        break;
    case Kind::array:
        credit_device(b.device, b.bytes);
        break;
    case Kind::imported:
        break;
    }
}

void* backing(std::size_t bytes, bool low32) {
    if (!low32) return std::malloc(bytes);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

void drop_backing(std::uintptr_t address, const Block& b) {
    if (b.low32)
        ::munmap(reinterpret_cast<void*>(address), b.bytes);
    else
        std::free(reinterpret_cast<void*>(address));
}

} // namespace

CUresult allocate(Kind kind, int device, std::size_t bytes, bool low32,
                  std::uintptr_t* out) noexcept {
    if (!charge(kind, device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
    void* p = backing(bytes, low32);
    const Block block{bytes, kind, device, low32};
    if (p == nullptr) {
        credit(block);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    {
        Table& t = table(address);
        const std::lock_guard lock(t.mutex);
        t.blocks.emplace(address, block);
    }
    *out = address;
    return CUDA_SUCCESS;
}

CUresult release(std::uintptr_t address, KindMask accepted) noexcept {
    Block block{};
    {
        Table& t = table(address);
        const std::lock_guard lock(t.mutex);
        const auto it = t.blocks.find(address);
        if (it == t.blocks.end() || (mask(it->second.kind) & accepted) == 0)
            return CUDA_ERROR_INVALID_VALUE;
        block = it->second;
        t.blocks.erase(it);
    }
    // Credit before the address can be reused, so a concurrent allocation never sees both.
    credit(block);
    drop_backing(address, block);
    return CUDA_SUCCESS;
}

bool lookup(std::uintptr_t address, Kind* kind, int* device, std::uintptr_t* base,
            std::size_t* bytes) noexcept {
    // Tests only: a scan of every shard is fast enough for the handful of blocks they hold.
    for (std::size_t i = 0; i < kShards; ++i) {
        Table& t = table_at(i);
        const std::lock_guard lock(t.mutex);
        for (const auto& [start, b] : t.blocks) {
            if (address < start || address >= start + b.bytes) continue;
            *kind = b.kind;
            *device = b.device;
            *base = start;
            *bytes = b.bytes;
            return true;
        }
    }
    return false;
}

} // namespace fakecuda
