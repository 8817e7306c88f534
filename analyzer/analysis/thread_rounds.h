// Threads that a program starts again and again: workers started for each epoch, a thread per
// batch. Each start of a new round of them is an iteration of a loop that no stack shows (the loop
// that starts them may allocate nothing itself), so what each round keeps and never frees, such as
// a model replica every worker makes before its own loop, would otherwise be judged one thread at a
// time, one buffer each: `retained`, where the program grows by a round's worth per epoch.
//
// A thread's routine is the outermost frame of the program's own code in its first allocation's
// stack (the trie node, so the frames outside it are the same too). The threads of one routine,
// in order of their first event, form rounds: a thread whose first event comes after the last
// event of every earlier one begins a new round, and threads that overlap share one. Threads that
// overlap throughout (a pool, the workers of one phase) are a single round, which is no loop.
//
// Only rounds that repeat make a loop: at least three, each of the same number of threads, at least
// two, that ran side by side (the last may have fewer, at least two: fewer shards left). Short
// threads started one after another in a single phase (each done before the next one starts, on a
// busy machine) also fall into rounds, but into rounds of one, or of uneven sizes, and what each of
// them keeps is bounded by their number, not a leak per round. A thread started alone per iteration
// is left to the loop of the thread that starts it (analysis/loops.h).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpuleak::analyzer {

class CallTree;

struct ThreadSpan {
    uint32_t lane = 0;
    uint64_t first_ts = 0, last_ts = 0; // its first and last event
    uint32_t routine = 0;               // CallTree node; 0: no frame of the program's own code
};

// Per event, O(1): the span of every thread (lane) of the trace.
class ThreadSpans {
public:
    // `slot`: the recording slot, dense; a slot's lane changes when a new thread takes it over.
    void on_event(uint32_t slot, uint32_t lane, uint64_t ts) {
        Current& c = at(slot);
        if (!c.used || c.span.lane != lane) {
            if (c.used) retired_.push_back(c.span);
            c = {true, false, {lane, ts, ts, 0}};
        }
        c.span.last_ts = ts;
    }
    // The lane's first allocation, with its path (CallTree nodes, outermost first).
    void on_first_alloc(uint32_t slot, const CallTree& calls, const std::vector<uint32_t>& path);
    bool needs_routine(uint32_t slot) { return !at(slot).routine_known; }
    // Events of `lane` from first_ts to last_ts that on_event was not given (thread_merge.h's
    // PassedOver): its span takes them in.
    void widen(uint32_t lane, uint64_t first_ts, uint64_t last_ts) {
        widened_.push_back({lane, first_ts, last_ts, 0});
    }

    // Every thread's span, by lane.
    std::vector<ThreadSpan> spans() const;

private:
    struct Current {
        bool used = false, routine_known = false;
        ThreadSpan span;
    };
    // Slots are dense from 0 in a trace the preload wrote; any 32-bit index in a damaged one.
    static constexpr uint32_t kDenseSlots = 1u << 16;
    Current& at(uint32_t slot) {
        if (slot < by_slot_.size()) [[likely]]
            return by_slot_[slot];
        return grow_to(slot);
    }
    [[gnu::noinline]] Current& grow_to(uint32_t slot) {
        if (slot >= kDenseSlots) return far_[slot];
        by_slot_.resize(slot + 1);
        return by_slot_[slot];
    }
    std::vector<Current> by_slot_;
    std::unordered_map<uint32_t, Current> far_;
    std::vector<ThreadSpan> retired_;
    std::vector<ThreadSpan> widened_;
};

// The start of each round of `threads` (all of one routine), ascending, the number of threads in
// each, and the last event of any of them.
struct Rounds {
    std::vector<uint64_t> starts;
    std::vector<uint32_t> threads;
    uint64_t last_ts = 0;
    // The rounds repeat (see above): they are a loop.
    bool repeat() const;
};
Rounds find_rounds(std::vector<ThreadSpan> threads);

} // namespace gpuleak::analyzer
