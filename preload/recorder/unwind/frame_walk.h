// A backtrace from frame rules: the caller's return addresses, innermost first, exactly as
// unw_backtrace gives them (tests/unit/unwind/frame_walk_test.cpp compares the two), without
// libunwind's per-frame work where every frame's rule is in the thread's cache. A frame no
// FrameRule describes hands the whole walk to libunwind.
#pragma once

#include <cstdint>

#include "recorder/unwind/rule_cache.h"
#include "recorder/unwind/walk_memo.h"

namespace gpuleak::unwind {

// The fallback's signature: unw_backtrace's.
using BacktraceFn = int (*)(void** frames, int max);

// What a walk needs of its thread. Reads of the stack stay inside [stack_low, stack_high).
struct WalkContext {
    RuleCache* cache = nullptr; // null: every walk goes to the fallback
    WalkMemo* memo = nullptr;   // null: every walk from scratch
    uint64_t stack_low = 0;
    uint64_t stack_high = 0;
};

// The bounds of the calling thread's stack (pthread_getattr_np: it may allocate; once per
// thread). False where they cannot be had.
bool current_stack_bounds(uint64_t& low, uint64_t& high);

} // namespace gpuleak::unwind

// The fallback. Set before the first walk.
extern "C" gpuleak::unwind::BacktraceFn gpuleak_unwind_fallback;

// Return addresses of the caller's stack, innermost first (the first is the return address of
// this call); at most `max`. Falls back to gpuleak_unwind_fallback, entered as if the caller had
// called it, so both give the same first frame. frame_walk.S.
extern "C" int gpuleak_backtrace(uint64_t* frames, int max,
                                 const gpuleak::unwind::WalkContext* context);

// The walk itself, from the caller's registers: -1 where a frame needs the fallback.
extern "C" int gpuleak_walk_frames(uint64_t* frames, int max,
                                   const gpuleak::unwind::WalkContext* context, uint64_t ip,
                                   uint64_t sp, uint64_t bp);
