// The tracing session of this process: started lazily by the first CUDA allocation event (so
// processes that never touch CUDA stay inert), ended by the library destructor, restarted in a
// forked child on its own first event.
#pragma once

#include <cstdint>

namespace gpuleak::session {

// True once tracing is running. The first caller starts it; false if it is disabled or failed.
bool ensure_started();
// After the library destructor: every event is written synchronously by its own thread.
bool direct_mode();
uint64_t start_mono_ns();

} // namespace gpuleak::session
