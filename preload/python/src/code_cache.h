// A thread's cache of code ids (CodeCache, python_stack.h): where a code object's address lands,
// whether a slot holds this code object, and storing one. A hit spares the registry and its lock;
// what makes a hit safe is the fingerprint (fingerprint.h), compared without computing it where
// the layout allows.
#pragma once

#include <cstdint>
#include <cstring>

#include "code_registry.h"
#include "fingerprint.h"
#include "frame_walk.h"
#include "python_stack.h"

namespace gpuleak::python {

inline void pack(const CodeKey& key, uint64_t (&out)[6]) {
    out[0] = key.code;
    out[1] = key.filename;
    out[2] = key.qualname;
    out[3] = key.linetable;
    out[4] = static_cast<uint32_t>(key.firstlineno);
    out[5] = key.content;
}

// Two ways per set: code objects whose addresses share a set (likely among a stack's few codes:
// 4 codes in 64 direct-mapped slots collide one time in ten) no longer evict each other on every
// capture. The set is the top 5 bits of the hash.
inline CodeCache::Slot* cache_set(CodeCache& cache, uint64_t code_hash) {
    return &cache.slots[2 * (code_hash >> 59)];
}
static_assert(CodeCache::kSlots == 64, "cache_set() takes the top 5 bits of the hash, 2 ways");

// The way of `set` holding `packed`, or nullptr.
inline CodeCache::Slot* cache_find(CodeCache::Slot* set, const uint64_t (&packed)[6]) {
    for (int way = 0; way < 2; ++way)
        if (std::memcmp(set[way].key, packed, sizeof packed) == 0) return &set[way];
    return nullptr;
}

// 3.12+: the way of `set` holding this code object, found without calling fingerprint(): its
// co_version is the fingerprint's content. Where the counter ran out (0) the fingerprint digests
// the line table instead, and nullptr sends the caller that way.
inline CodeCache::Slot* cache_find_versioned(const Layout& l, CodeCache::Slot* set,
                                             uintptr_t code) {
    if (set[0].key[0] != code && set[1].key[0] != code) return nullptr;
    uint32_t version = load<uint32_t>(code, static_cast<uint32_t>(l.co_version));
    if (!version) return nullptr;
    CodeKey key = code_pointers(l, code);
    key.content = version;
    uint64_t packed[6];
    pack(key, packed);
    for (int way = 0; way < 2; ++way) {
        const uint64_t* key = set[way].key;
        if (((key[0] ^ packed[0]) | (key[1] ^ packed[1]) | (key[2] ^ packed[2]) |
             (key[3] ^ packed[3]) | (key[4] ^ packed[4]) | (key[5] ^ packed[5])) == 0)
            return &set[way];
    }
    return nullptr;
}

// Up to 3.11: the way of `set` holding this code object, found without its fingerprint: the
// pointers and first line fingerprint() reads (code_pointers()), and the copy of what it digests.
inline CodeCache::Slot* cache_find_undigested(const Layout& l, CodeCache::Slot* set,
                                              uintptr_t code) {
    if (set[0].key[0] != code && set[1].key[0] != code) return nullptr;
    const CodeKey key = code_pointers(l, code);
    const uint64_t firstlineno = static_cast<uint32_t>(key.firstlineno); // as pack() stores it
    for (int way = 0; way < 2; ++way) {
        const CodeCache::Slot& slot = set[way];
        if (slot.key[0] == code && slot.key[1] == key.filename && slot.key[2] == key.qualname &&
            slot.key[3] == key.linetable && slot.key[4] == firstlineno &&
            same_content(l, key.qualname, key.linetable, slot))
            return &set[way];
    }
    return nullptr;
}

// Stores a code's fingerprint and id in way 0 (up to 3.11 with the copy of what the fingerprint
// digests). The previous way 0 moves to way 1 (dropping the least recently stored entry, or a
// stale one for this address), unless it is this address's stale entry, which is overwritten.
inline void cache_store(const Layout& l, CodeCache::Slot* set, const CodeKey& key,
                        const uint64_t (&packed)[6], uint64_t id) {
    if (set[0].key[0] != packed[0]) set[1] = set[0];
    std::memcpy(set[0].key, packed, sizeof packed);
    set[0].id = id;
    if (digests_content(l)) copy_content(l, key.qualname, key.linetable, set[0]);
}

} // namespace gpuleak::python
