#include "recorder/stack_trie.h"

#include "support/pages.h"

namespace gpuleak {
namespace {

inline size_t mix(uint64_t parent, uint64_t frame) {
    uint64_t h = (parent * 0x9E3779B97F4A7C15ull) ^ (frame + 0x632BE59BD9B4E019ull + (parent << 6));
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return static_cast<size_t>(h ^ (h >> 29));
}

} // namespace

StackTrie::~StackTrie() {
    unmap_pages(slots_, capacity_ * sizeof(Slot));
}

void StackTrie::clear() {
    unmap_pages(slots_, capacity_ * sizeof(Slot));
    slots_ = nullptr;
    capacity_ = used_ = 0;
    next_id_ = 1;
}

bool StackTrie::grow() {
    size_t new_capacity = capacity_ ? capacity_ * 2 : 4096;
    auto* fresh = static_cast<Slot*>(map_pages(new_capacity * sizeof(Slot)));
    if (!fresh) return false;
    for (size_t i = 0; i < capacity_; ++i) {
        const Slot& s = slots_[i];
        if (!s.id) continue;
        size_t j = mix(s.parent, s.frame) & (new_capacity - 1);
        while (fresh[j].id)
            j = (j + 1) & (new_capacity - 1);
        fresh[j] = s;
    }
    unmap_pages(slots_, capacity_ * sizeof(Slot));
    slots_ = fresh;
    capacity_ = new_capacity;
    return true;
}

uint64_t StackTrie::intern(uint64_t parent, uint64_t frame, bool& created) {
    created = false;
    if ((used_ + 1) * 4 > capacity_ * 3 && !grow()) return 0;
    size_t mask = capacity_ - 1;
    for (size_t i = mix(parent, frame) & mask;; i = (i + 1) & mask) {
        Slot& s = slots_[i];
        if (!s.id) {
            s = {parent, frame, next_id_++};
            ++used_;
            created = true;
            return s.id;
        }
        if (s.parent == parent && s.frame == frame) return s.id;
    }
}

} // namespace gpuleak
