#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace gpuleak::analyzer {

// Non-overlapping half-open address ranges, each mapped to a value: the symbolizer's modules (not
// analysis/address_map.h, which maps single addresses). A new range takes over whatever part of
// older ranges it overlaps: a library loaded after a dlclose may reuse the addresses of the one
// before it, and the newer mapping is the one later stacks refer to.
template <typename Value> class RangeMap {
public:
    void assign(uint64_t begin, uint64_t end, Value value) {
        if (begin >= end) return;
        auto it = spans_.lower_bound(begin);
        if (it != spans_.begin()) {
            auto prev = std::prev(it);
            if (prev->second.end > begin) {
                const Span old = prev->second;
                prev->second.end = begin;
                if (old.end > end) spans_.emplace(end, old);
            }
        }
        while (it != spans_.end() && it->first < end) {
            if (it->second.end > end) spans_.emplace(end, it->second);
            it = spans_.erase(it);
        }
        spans_.emplace(begin, Span{end, value});
    }

    // nullptr when no range holds addr.
    const Value* find(uint64_t addr) const {
        auto it = spans_.upper_bound(addr);
        if (it == spans_.begin()) return nullptr;
        --it;
        return addr < it->second.end ? &it->second.value : nullptr;
    }

    size_t size() const { return spans_.size(); }

private:
    struct Span {
        uint64_t end;
        Value value;
    };
    std::map<uint64_t, Span> spans_; // keyed by begin
};

} // namespace gpuleak::analyzer
