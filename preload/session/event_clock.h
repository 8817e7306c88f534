// The clock of every event: CLOCK_MONOTONIC's nanoseconds. The reader orders threads by it (a free
// must sort before the reuse of its address on another thread), so every thread must read one
// clock. Where the kernel keeps CLOCK_MONOTONIC on the TSC itself (current_clocksource "tsc": it
// found the counters constant and synchronized across CPUs, and watches them), the counter is read
// directly and scaled, which costs about half of clock_gettime (8.8 and 14.6 ns for rdtsc and
// rdtscp against 20.4 on the machine of docs/performance.md), a third of a free event. Elsewhere
// (kvm-clock, hpet, a kernel that marked the TSC unstable) and with GPULEAK_CLOCK=monotonic:
// clock_gettime. The scale is measured once per process, over a millisecond when tracing starts,
// and never changes, so the clock stays monotonic; it runs at the TSC's rate, which NTP does not
// slew (at most 500 ppm off CLOCK_MONOTONIC: durations, not order).
#pragma once

#include <x86intrin.h>

#include <cstdint>

namespace gpuleak::session::event_clock {

// Decides the source and measures the TSC's scale: once per process image (a forked child keeps
// its parent's), before the session becomes active. `allow_tsc` false: clock_gettime.
void calibrate(bool allow_tsc);
// Whether events read the TSC (after calibrate()).
bool reads_tsc();
// CLOCK_MONOTONIC from clock_gettime: the events' clock where the TSC is not read, and deadlines.
uint64_t monotonic_ns();

namespace detail {
// Written once by calibrate(), before the session's state turns active (release); read after it
// (acquire).
struct Scale {
    bool tsc = false;
    uint64_t tsc_base = 0, ns_base = 0;
    uint64_t mult = 0; // ns per tick, 32.32 fixed point
};
extern Scale g_scale;

inline uint64_t from_tsc(uint64_t tsc) {
    // A read that ran ahead of the scale's base (rdtsc before an earlier load) is its base.
    uint64_t ticks = tsc > g_scale.tsc_base ? tsc - g_scale.tsc_base : 0;
    return g_scale.ns_base +
           static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) * g_scale.mult) >> 32);
}
} // namespace detail

// Read after every earlier instruction has executed: an allocation's time, taken once the call
// has returned its address (whose earlier free another thread stamped before the call).
inline uint64_t now_ns() {
    if (detail::g_scale.tsc) {
        unsigned aux;
        return detail::from_tsc(__rdtscp(&aux));
    }
    return monotonic_ns();
}

// May be read before earlier instructions complete, never after later ones retire: the time of a
// free, taken before the call that lets another thread have the address back.
inline uint64_t now_ns_before_call() {
    if (detail::g_scale.tsc) return detail::from_tsc(__rdtsc());
    return monotonic_ns();
}

} // namespace gpuleak::session::event_clock
