// Gives each code object a stable id, keyed by address. Addresses are reused once a code object
// dies (1,000 exec'd functions used as few as 529 addresses), and nothing tells us when that
// happens without the GIL, so each entry keeps a fingerprint (fingerprint.h) that a different
// code object at the same address would not share.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuleak::python {

struct CodeKey {
    uintptr_t code;
    uintptr_t filename;
    uintptr_t qualname;
    uintptr_t linetable;
    int32_t firstlineno;
    uint64_t content; // digest of what those pointers point to

    bool operator==(const CodeKey&) const = default;
};

// Where a code object's address lands in a hash table (the registry's, a thread's CodeCache):
// objects are 16-byte aligned; Fibonacci hashing spreads the remaining bits into the high ones.
inline uint64_t code_address_hash(uintptr_t code) {
    return (code >> 4) * 0x9e3779b97f4a7c15ull;
}

// Open addressing over mmap'ed memory, so the hook path never calls malloc. Not thread-safe:
// the caller serializes access.
class CodeRegistry {
public:
    CodeRegistry() = default;
    CodeRegistry(const CodeRegistry&) = delete;
    CodeRegistry& operator=(const CodeRegistry&) = delete;
    // No destructor on purpose: the process-wide registry must outlive static destruction, since
    // other threads may still allocate while exit() runs. clear() releases the memory.

    // The id for `key`; `fresh` is set when the id is new (first sighting, or a different code
    // object at a known address). 0 when the table could not grow.
    uint64_t resolve(const CodeKey& key, bool& fresh);
    // Forgets every entry; ids handed out later still never repeat earlier ones.
    void clear();
    size_t size() const { return used_; }

private:
    struct Slot {
        CodeKey key;
        uint64_t id;
    };
    bool grow();
    Slot* find(Slot* slots, size_t capacity, uintptr_t code) const;

    Slot* slots_ = nullptr;
    size_t capacity_ = 0; // power of two
    size_t used_ = 0;
    uint64_t next_id_ = 1;
};

} // namespace gpuleak::python
