#include "recorder/unwind/walk_memo.h"

#include <new>

namespace gpuleak::unwind {
namespace {

// Per record: six arrays of words, then one of bytes padded to a word.
size_t record_bytes(unsigned capacity) {
    return 6 * static_cast<size_t>(capacity) * sizeof(uint64_t) + ((capacity + 7u) & ~7u);
}

} // namespace

size_t WalkMemo::bytes(unsigned capacity) {
    return sizeof(WalkMemo) + 2 * record_bytes(capacity);
}

WalkMemo* WalkMemo::place(void* memory, unsigned capacity) {
    auto* memo = new (memory) WalkMemo();
    memo->capacity = capacity;
    auto* next = static_cast<uint8_t*>(memory) + sizeof(WalkMemo);
    for (WalkRecord& r : memo->records) {
        auto* w = reinterpret_cast<uint64_t*>(next);
        r.ip = w;
        r.sp = w + capacity;
        r.bp = w + 2 * capacity;
        r.cfa = w + 3 * capacity;
        r.bp_slot = w + 4 * capacity;
        r.cfa_slot = w + 5 * capacity;
        r.uses_bp = reinterpret_cast<uint8_t*>(w + 6 * capacity);
        next += record_bytes(capacity);
    }
    return memo;
}

} // namespace gpuleak::unwind
