#include "code_registry.h"

#include <sys/mman.h>

namespace gpuleak::python {
namespace {

constexpr size_t kInitialCapacity = 1024;

void* map_zeroed(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

} // namespace

CodeRegistry::Slot* CodeRegistry::find(Slot* slots, size_t capacity, uintptr_t code) const {
    size_t mask = capacity - 1;
    for (size_t i = code_address_hash(code) & mask;; i = (i + 1) & mask) {
        if (slots[i].key.code == code || slots[i].key.code == 0) return &slots[i];
    }
}

bool CodeRegistry::grow() {
    size_t capacity = capacity_ ? 2 * capacity_ : kInitialCapacity;
    auto* slots = static_cast<Slot*>(map_zeroed(capacity * sizeof(Slot)));
    if (!slots) return false;
    for (size_t i = 0; i < capacity_; ++i) {
        if (slots_[i].key.code) *find(slots, capacity, slots_[i].key.code) = slots_[i];
    }
    if (slots_) munmap(slots_, capacity_ * sizeof(Slot));
    slots_ = slots;
    capacity_ = capacity;
    return true;
}

uint64_t CodeRegistry::resolve(const CodeKey& key, bool& fresh) {
    fresh = false;
    if (2 * (used_ + 1) > capacity_ && !grow()) return 0;
    Slot* slot = find(slots_, capacity_, key.code);
    if (slot->key.code == 0) {
        ++used_;
    } else if (slot->key == key) {
        return slot->id;
    }
    slot->key = key;
    slot->id = next_id_++;
    fresh = true;
    return slot->id;
}

void CodeRegistry::clear() {
    if (slots_) munmap(slots_, capacity_ * sizeof(Slot));
    slots_ = nullptr;
    capacity_ = 0;
    used_ = 0;
}

} // namespace gpuleak::python
