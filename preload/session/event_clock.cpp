#include "session/event_clock.h"

#include <cpuid.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace gpuleak::session::event_clock {
namespace detail {
Scale g_scale;
} // namespace detail

uint64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

bool g_calibrated = false;

// The kernel's own clock runs on the TSC: it checked the counters at boot and would have switched
// away from them had they drifted apart.
bool kernel_clock_is_tsc() {
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char name[16] = {};
    ssize_t n = read(fd, name, sizeof name - 1);
    close(fd);
    return n >= 3 && std::strncmp(name, "tsc", 3) == 0 && (n == 3 || name[3] == '\n');
}

bool has_rdtscp() {
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27));
}

// A (TSC, CLOCK_MONOTONIC) pair read as close together as five tries allow: the clock read whose
// two bracketing counter reads are nearest, and their midpoint.
void pair(uint64_t& tsc, uint64_t& ns) {
    uint64_t best = ~uint64_t{0};
    for (int i = 0; i < 5; ++i) {
        unsigned aux;
        uint64_t before = __rdtscp(&aux);
        uint64_t mono = monotonic_ns();
        uint64_t after = __rdtscp(&aux);
        if (after - before < best) {
            best = after - before;
            tsc = before + (after - before) / 2;
            ns = mono;
        }
    }
}

} // namespace

void calibrate(bool allow_tsc) {
    if (g_calibrated) return;
    g_calibrated = true;
    if (!allow_tsc || !has_rdtscp() || !kernel_clock_is_tsc()) return;
    uint64_t tsc0 = 0, ns0 = 0, tsc1 = 0, ns1 = 0;
    pair(tsc0, ns0);
    // A millisecond: the pairs' error (a few ns each) is then a few parts in a million of the
    // scale.
    while (monotonic_ns() - ns0 < 1000000) {
    }
    pair(tsc1, ns1);
    if (tsc1 <= tsc0 || ns1 <= ns0) return;
    detail::Scale s;
    s.tsc = true;
    s.tsc_base = tsc1;
    s.ns_base = ns1;
    s.mult =
        static_cast<uint64_t>((static_cast<unsigned __int128>(ns1 - ns0) << 32) / (tsc1 - tsc0));
    if (s.mult == 0) return;
    detail::g_scale = s;
}

bool reads_tsc() {
    return detail::g_scale.tsc;
}

} // namespace gpuleak::session::event_clock
