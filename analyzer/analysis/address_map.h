// Live allocations by address: an open-addressing table (linear probing, deletion by backward
// shift), since the replay looks up or changes it on every allocation and free and a node-based map
// would allocate and chase a pointer each time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuleak::analyzer {

template <typename Value> class AddressMap {
public:
    AddressMap() { slots_.resize(kInitialSlots); }

    Value* find(uint64_t address) {
        for (size_t i = home(address);; i = next(i)) {
            Slot& s = slots_[i];
            if (!s.used) return nullptr;
            if (s.address == address) return &s.value;
        }
    }

    // The entry of `address` and true if it was inserted with `value`; the existing entry and false
    // if there was one (left unchanged).
    std::pair<Value*, bool> try_emplace(uint64_t address, const Value& value) {
        if ((size_ + 1) * 4 > slots_.size() * 3) grow();
        for (size_t i = home(address);; i = next(i)) {
            Slot& s = slots_[i];
            if (!s.used) {
                s = {value, address, true};
                ++size_;
                return {&s.value, true};
            }
            if (s.address == address) return {&s.value, false};
        }
    }

    // Removes the entry `value` points to (from find or try_emplace, with no change to the map
    // since).
    void erase(Value* value) {
        size_t hole = static_cast<size_t>(reinterpret_cast<Slot*>(value) - slots_.data());
        // Move back every later entry of the run that may no longer be reachable across the hole.
        for (size_t i = next(hole);; i = next(i)) {
            Slot& s = slots_[i];
            if (!s.used) break;
            size_t want = home(s.address);
            // s may fill the hole if its home is not within (hole, i] cyclically.
            bool between = hole < i ? (want > hole && want <= i) : (want > hole || want <= i);
            if (!between) {
                slots_[hole] = s;
                hole = i;
            }
        }
        slots_[hole].used = false;
        --size_;
    }

    size_t size() const { return size_; }

    template <typename F> void for_each(F&& f) const {
        for (const Slot& s : slots_)
            if (s.used) f(s.address, s.value);
    }

private:
    struct Slot {
        Value value; // first: a Value* is its Slot*
        uint64_t address;
        bool used;
    };
    static constexpr size_t kInitialSlots = 64;

    size_t home(uint64_t address) const {
        // Fibonacci hashing: aligned addresses differ in their middle bits.
        return static_cast<size_t>((address * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

    void grow() {
        std::vector<Slot> old(slots_.size() * 2);
        old.swap(slots_);
        --shift_;
        for (const Slot& s : old) {
            if (!s.used) continue;
            size_t i = home(s.address);
            while (slots_[i].used)
                i = next(i);
            slots_[i] = s;
        }
    }

    std::vector<Slot> slots_;
    size_t size_ = 0;
    unsigned shift_ = 64 - 6; // log2(kInitialSlots) bits of the hash
};

} // namespace gpuleak::analyzer
