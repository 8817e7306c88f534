// Native backtraces through libunwind, loaded privately at run time: linked normally, libunwind's
// _Unwind_RaiseException & co. would enter the global scope ahead of libgcc_s and take over the
// application's C++ exception handling. RTLD_LOCAL keeps them to us.
#pragma once

#include <cstdint>

namespace gpuleak::unwinder {

// Loads libunwind and primes it (the first unwind allocates and reads unwind tables). Returns
// false, after one warning, if libunwind is missing: events are then recorded without native
// stacks.
bool init();
// Return addresses of the caller's stack, innermost first; 0 if unavailable.
int backtrace(uint64_t* frames, int max);

} // namespace gpuleak::unwinder
