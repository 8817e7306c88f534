// Frame rules by return address: a thread's direct-mapped cache in front of the unwind tables of
// the loaded modules. A stack walked again (a loop allocating) finds every frame's rule here.
#pragma once

#include <atomic>
#include <cstdint>

#include "recorder/unwind/frame_rule.h"

namespace gpuleak::unwind {

// The rule of a return address, from the loaded module that holds it (Unsupported if none, or it
// has no .eh_frame_hdr). Takes the loader's lock (dl_iterate_phdr), so a module cannot be unloaded
// while its tables are read.
FrameRule rule_for_return_address(uint64_t return_address);

// Every thread's cache is emptied before its next use: call when modules were unloaded or loaded
// (an address may now belong to other code).
void invalidate_rule_caches();

class RuleCache {
public:
    static constexpr unsigned kBits = 11;
    static constexpr unsigned kSlots = 1u << kBits;

    [[gnu::always_inline]] FrameRule lookup(uint64_t return_address) {
        Slot& s = slots_[(return_address * 0x9E3779B97F4A7C15ull) >> (64 - kBits)];
        if (s.return_address == return_address) [[likely]]
            return s.rule;
        return fill(s, return_address);
    }
    unsigned generation() const { return generation_; }
    // Once per walk: empties the cache if modules changed since it was filled.
    [[gnu::always_inline]] void check_generation() {
        unsigned g = g_generation.load(std::memory_order_relaxed);
        if (g != generation_) [[unlikely]]
            clear(g);
    }

private:
    struct Slot {
        uint64_t return_address = 0;
        FrameRule rule;
    };
    [[gnu::noinline]] FrameRule fill(Slot& s, uint64_t return_address);
    [[gnu::noinline]] void clear(unsigned generation);

    static std::atomic<unsigned> g_generation;
    friend void invalidate_rule_caches();

    unsigned generation_ = 0;
    Slot slots_[kSlots];
};

} // namespace gpuleak::unwind
