// A thread's previous walk, kept so that the next one can reuse its outer part. A walk is a
// function of the registers it starts from, the frame rules (fixed while the rule caches'
// generation is) and the stack words it reads. So where a new walk reaches a frame the previous one
// passed through with the same registers, and every word the previous walk read from there on still
// holds what it read, the rest of the walk is the previous one's: those reads are checked
// (independent loads, no chain of dependent ones) instead of walked again. A loop allocating from
// one call site reuses the whole stack; different call paths reuse their common outer frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuleak::unwind {

// One walk, frame by frame. Frame f is left by reading its return address at sp[f + 1] - 8, and,
// where its rule says so, rbp at bp_slot[f] and the CFA at cfa_slot[f] (0: not read).
struct WalkRecord {
    static constexpr uint8_t kUsesBp = 1;     // the frame's rule reads rbp (to find the CFA or rbp)
    static constexpr uint8_t kRestoresBp = 2; // rbp comes back from the stack, whatever it was
    static constexpr uint8_t kBpMatters =
        4; // rbp is read before it is restored, here or further out

    unsigned n = 0; // frames; 0: nothing to reuse
    unsigned generation = 0;
    bool complete = false;  // ended at the outermost frame, not cut at a maximum
    uint64_t end_ra_at = 0; // where the outermost frame's null return address was read, if it was
    uint64_t* ip = nullptr;
    uint64_t* sp = nullptr;
    uint64_t* bp = nullptr;
    uint64_t* bp_slot = nullptr;
    uint64_t* cfa_slot = nullptr;
    uint8_t* flags = nullptr;
};

struct WalkMemo {
    unsigned capacity = 0; // frames per record
    unsigned previous = 0; // records[previous] is the last complete walk
    WalkRecord records[2];
    unsigned long reused = 0; // walks that took their outer part from the previous one

    // The bytes a memo for walks of up to `capacity` frames takes, and one built in `memory` (that
    // many zeroed bytes, 8-aligned).
    static size_t bytes(unsigned capacity);
    static WalkMemo* place(void* memory, unsigned capacity);
    // Forgets the previous walk (a new thread: its stack is elsewhere).
    void reset() { records[previous].n = 0; }
};

} // namespace gpuleak::unwind
