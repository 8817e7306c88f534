// Native backtraces. Walked from the unwind tables' frame rules, cached per thread
// (recorder/unwind/); where a frame needs more (a signal frame, an expression), by libunwind,
// loaded privately at run time: linked normally, libunwind's _Unwind_RaiseException & co. would
// enter the global scope ahead of libgcc_s and take over the application's C++ exception handling.
// RTLD_LOCAL keeps them to us.
#pragma once

#include <cstdint>

#include "recorder/unwind/frame_walk.h"

namespace gpuleak::unwinder {

// Loads libunwind and primes it (the first unwind allocates and reads unwind tables). Without
// libunwind (one warning) stacks come from the frame rules alone, and a stack they cannot walk is
// recorded without native frames.
bool init();

// Makes the calling thread's walks use `cache` (null: libunwind for every walk) and `memo` (null:
// every walk in full; emptied here) and bounds them by its stack. Once per thread, before its first
// backtrace.
void attach_thread(unwind::RuleCache* cache, unwind::WalkMemo* memo);

// Modules were loaded or unloaded: every thread's cached rules, and libunwind's, are dropped.
// Called by the dlclose hook and by the writer thread's module check.
void modules_changed();

namespace detail {
extern __thread unwind::WalkContext t_walk __attribute__((tls_model("initial-exec")));
} // namespace detail

// Return addresses of the caller's stack, innermost first (the first is the return address of
// this call: inline, so the caller's own); 0 if unavailable.
[[gnu::always_inline]] inline int backtrace(uint64_t* frames, int max) {
    return gpuleak_backtrace(frames, max, &detail::t_walk);
}

} // namespace gpuleak::unwinder
