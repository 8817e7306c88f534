// The events' clock (preload/session/event_clock.h): on a machine whose kernel keeps its clock on
// the TSC it reads the TSC, and either way it is CLOCK_MONOTONIC's nanoseconds, within what a
// millisecond's calibration allows, never going back within a thread and ordered across threads.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "session/event_clock.h"

namespace gpuleak::session::event_clock {
namespace {

uint64_t monotonic() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool kernel_on_tsc() {
    std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string name;
    return (in >> name) && name == "tsc";
}

class EventClock : public ::testing::Test {
protected:
    static void SetUpTestSuite() { calibrate(true); }
};

TEST_F(EventClock, ReadsTheTscWhereTheKernelsClockRunsOnIt) {
    if (!kernel_on_tsc()) {
        EXPECT_FALSE(reads_tsc());
        GTEST_SKIP() << "the kernel's clocksource is not tsc here: clock_gettime is used";
    }
    EXPECT_TRUE(reads_tsc());
}

TEST_F(EventClock, IsTheMonotonicClock) {
    // Over 200 ms the scale's error (a few parts in a million) stays far below 100 us.
    const uint64_t start = monotonic();
    while (monotonic() - start < 200'000'000) {
    }
    for (int i = 0; i < 100; ++i) {
        uint64_t before = monotonic();
        uint64_t ours = now_ns();
        uint64_t after = monotonic();
        EXPECT_GE(ours + 100'000, before);
        EXPECT_LE(ours, after + 100'000);
        uint64_t early = now_ns_before_call();
        EXPECT_GE(early + 100'000, after);
    }
}

// The ordered read. (A read before a call may run ahead of an earlier one by a few cycles: the
// recorder keeps each thread's times from going back.)
TEST_F(EventClock, NeverGoesBackOnAThread) {
    uint64_t last = now_ns();
    for (int i = 0; i < 1'000'000; ++i) {
        uint64_t t = now_ns();
        ASSERT_GE(t, last) << "read " << i;
        last = t;
    }
}

// What the reader's merge needs: a time one thread stamps after seeing another's store is not
// before the time that thread stamped ahead of the store (a free's before the call, an
// allocation's after it).
TEST_F(EventClock, OrdersAStoreAndTheLoadThatSeesIt) {
    std::atomic<uint64_t> published{0};
    std::atomic<bool> stop{false}, reading{false};
    std::atomic<uint64_t> seen{0};
    uint64_t violations = 0;
    std::thread reader([&] {
        uint64_t last = 0;
        reading = true;
        while (!stop.load(std::memory_order_relaxed)) {
            uint64_t stamped = published.load(std::memory_order_acquire);
            if (stamped == last) continue;
            uint64_t t = now_ns();
            seen.fetch_add(1, std::memory_order_relaxed);
            violations += t < stamped;
            last = stamped;
        }
    });
    // Until the reader has seen 10 000 stamps (a loaded machine may not run it at once), at most
    // 10 s.
    while (!reading) {
    }
    const uint64_t deadline = monotonic() + 10'000'000'000;
    while (seen.load(std::memory_order_relaxed) < 10'000 && monotonic() < deadline)
        for (int i = 0; i < 1000; ++i)
            published.store(now_ns_before_call(), std::memory_order_release);
    stop = true;
    reader.join();
    EXPECT_EQ(violations, 0u) << "of " << seen;
    EXPECT_GE(seen.load(), 10'000u);
}

} // namespace
} // namespace gpuleak::session::event_clock
