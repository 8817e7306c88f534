// The tracing session of this process: started lazily by the first CUDA allocation event (so
// processes that never touch CUDA stay inert), ended by the library destructor, restarted in a
// forked child on its own first event.
#pragma once

#include <cstdint>

namespace gpuleak::session {

// What records events, as the session drives it. The session knows no recorder header: the
// recorder hands this over with every ensure_started() (one constant), so the dependency runs one
// way, recorder -> session.
struct Producer {
    void (*on_start)();         // the file is open: write the process record, the module map...
    void (*collect_idle)();     // writer thread, every flush interval: seal idle threads' chunks
    void (*at_exit)();          // library destructor, writer thread stopped: write everything
    void (*after_fork_child)(); // in a forked child: forget the parent's state
};

// True once tracing is running. The first caller starts it; false if it is disabled or failed.
bool ensure_started(const Producer& producer);
// After the library destructor: every event is written synchronously by its own thread.
bool direct_mode();
uint64_t start_mono_ns();

} // namespace gpuleak::session
