// A thread's previous walk, kept so that the next one can skip the frames they share. Leaving a
// frame is a function of its registers, its rule (fixed for its return address while the rule
// caches' generation is) and the stack words the rule says to read. So where a walk stands in a
// frame the previous walk passed through, with the same return address and stack pointer (and rbp,
// where the rule reads it), the previous walk's addresses for that frame are this walk's too: the
// step reads the words there without looking up the rule and computing the CFA, and where they hold
// what they held last time (the return address), the next frame is the previous walk's next frame
// as well. Those reads are independent loads, not a chain in which each address is computed from
// the word loaded before. A loop allocating from one call site takes every frame this way;
// different call paths, their common outer frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuleak::unwind {

// One walk, frame by frame. Frame f, at stack pointer sp[f], is left for the frame at cfa[f] by
// reading the return address at cfa[f] - 8 and, where its rule says so, rbp at bp_slot[f] and the
// CFA itself at cfa_slot[f] (0: not read).
struct WalkRecord {
    unsigned n = 0; // frames whose step is recorded; 0: nothing to reuse
    unsigned generation = 0;
    uint64_t* ip = nullptr;
    uint64_t* sp = nullptr;
    uint64_t* bp = nullptr;
    uint64_t* cfa = nullptr;
    uint64_t* bp_slot = nullptr;
    uint64_t* cfa_slot = nullptr;
    uint8_t* uses_bp = nullptr; // the rule reads rbp: the step is the same only with the same rbp
};

struct WalkMemo {
    unsigned capacity = 0; // frames per record
    unsigned previous = 0; // records[previous] is the last walk
    WalkRecord records[2];
    unsigned long reused = 0; // frames left the previous walk's way (tests)

    // The bytes a memo for walks of up to `capacity` frames takes, and one built in `memory` (that
    // many zeroed bytes, 8-aligned).
    static size_t bytes(unsigned capacity);
    static WalkMemo* place(void* memory, unsigned capacity);
    // Forgets the previous walk (a new thread: its stack is elsewhere).
    void reset() { records[previous].n = 0; }
};

} // namespace gpuleak::unwind
