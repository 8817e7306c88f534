// The tracing session of this process: started lazily by the first CUDA allocation event (so
// processes that never touch CUDA stay inert), ended by the library destructor, restarted in a
// forked child on its own first event.
#pragma once

#include <atomic>
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

// The session's state, read inline by every event (a call per read was about a tenth of a free
// event's instructions). Written only by session.cpp.
namespace state {
enum : int { kOff, kStarting, kActive, kDisabled };
extern std::atomic<int> g_state;
extern std::atomic<bool> g_direct;
extern uint64_t g_start_mono;
} // namespace state

bool ensure_started_slow(const Producer& producer);

// True once tracing is running. The first caller starts it; false if it is disabled or failed.
inline bool ensure_started(const Producer& producer) {
    if (state::g_state.load(std::memory_order_acquire) == state::kActive) [[likely]]
        return true;
    return ensure_started_slow(producer);
}
// After the library destructor: every event is written synchronously by its own thread.
inline bool direct_mode() {
    return state::g_direct.load(std::memory_order_relaxed);
}
inline uint64_t start_mono_ns() {
    return state::g_start_mono;
}
// An event clock reading (session/event_clock.h) as time since the trace started. A read that ran
// ahead of the load that saw the session active (rdtsc waits for no earlier load) may come before
// the start: it is the start, not 2^64 - 1 (each thread's times never go back, so one such read
// would have pinned all later ones).
inline uint64_t since_start(uint64_t t) {
    return t > state::g_start_mono ? t - state::g_start_mono : 0;
}

} // namespace gpuleak::session
