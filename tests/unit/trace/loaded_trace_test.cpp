// The analyzer's two passes over traces built in memory (format/trace_builder.h), no file and no
// process involved: definitions merged across threads, events merged by time.
#include <gtest/gtest.h>

#include <stdexcept>

#include "gpuleak/format/trace_builder.h"
#include "support/heap_counter.h"
#include "trace/event_stream.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {
namespace {

using format::ThreadRef;
using format::TraceBuilder;

TEST(LoadedTrace, ReadsATraceBuiltInMemory) {
    TraceBuilder b;
    b.process({.pid = 99, .exe = "/usr/bin/x", .argv = {"x", "--y"}});
    ThreadRef main = b.thread(100, "main");
    ThreadRef worker = b.thread(101, "worker");
    // The same call path in both threads: one process-wide node per frame.
    uint64_t a = b.stack(main, {0x1003, 0x1002, 0x1001});
    uint64_t w = b.stack(worker, {0x1003, 0x1002, 0x1001});
    uint64_t other = b.stack(worker, {0x2000, 0x1001});
    b.alloc(main, 10, 0xa0, 100, a);
    b.alloc(worker, 10, 0xb0, 200, w); // the same time: the lower thread index comes first
    b.marker(main, 15);
    b.free(main, 20, 0xa0);
    b.alloc(worker, 25, 0xc0, 300, other);
    b.end(30);

    LoadedTrace t;
    std::string error;
    ASSERT_TRUE(load_trace("built", b.bytes(), t, error)) << error;
    EXPECT_TRUE(t.warnings.empty());
    EXPECT_TRUE(t.clean_end);
    EXPECT_EQ(t.process.pid, 99u);
    EXPECT_EQ(t.process.command(), "x --y");
    EXPECT_EQ(t.native_nodes.size(), 5u); // root, 0x1001, 0x1002, 0x1003, 0x2000
    EXPECT_EQ(t.native_node(main.index, a), t.native_node(worker.index, w));
    EXPECT_NE(t.native_node(worker.index, other), t.native_node(worker.index, w));
    ASSERT_EQ(t.markers.size(), 1u);
    EXPECT_EQ(t.markers[0].ts.take(), std::vector<uint64_t>{15});
    EXPECT_EQ(t.marker_count, 1u);

    std::vector<std::pair<uint32_t, uint64_t>> order; // (thread, ts)
    ASSERT_TRUE(
        for_each_event(t, [&](const Event& e) { order.emplace_back(e.thread, e.record->ts); }));
    EXPECT_EQ(order, (std::vector<std::pair<uint32_t, uint64_t>>{{main.index, 10},
                                                                 {worker.index, 10},
                                                                 {main.index, 15},
                                                                 {main.index, 20},
                                                                 {worker.index, 25}}));
    EXPECT_THROW(b.alloc(main, 19, 0xd0, 1), std::invalid_argument); // a thread's time goes on
}

TEST(LoadedTrace, RefusesAnEmptyTraceInMemoryWithTheReadersMessage) {
    TraceBuilder b;
    LoadedTrace t;
    std::string error;
    EXPECT_FALSE(load_trace("empty", b.bytes(), t, error));
    EXPECT_NE(error.find("holds no data"), std::string::npos) << error;
}

// A job marked at every one of a million iterations, with two names in turn, as NVTX ranges are:
// pass 1 keeps each name once and each marker as its time in an array that grows without copies
// (common/growing_times.h), not a record and a string per marker (about 125 bytes each, 120 MB
// here, before); the times come out per name, in order.
TEST(LoadedTrace, AMarkerCostsItsTimeAndNoMore) {
    constexpr uint64_t kIterations = 1'000'000;
    TraceBuilder b;
    b.process({.pid = 7, .exe = "/usr/bin/train", .argv = {"train"}});
    ThreadRef main = b.thread(10, "main");
    for (uint64_t i = 0; i < kIterations; ++i) {
        b.marker(main, 100 * i + 1, "a step of the training loop");
        b.marker(main, 100 * i + 50, "forward");
    }
    b.end(100 * kIterations);
    std::vector<uint8_t> bytes = b.bytes();

    LoadedTrace t;
    std::string error;
    test::heap_mark();
    ASSERT_TRUE(load_trace("markers", std::move(bytes), t, error)) << error;
    // The vector part of two arrays (1 MiB each) and what reading takes, whatever the count.
    EXPECT_LT(test::heap_peak_above_mark(), size_t{8} << 20);
    EXPECT_EQ(t.marker_count, 2 * kIterations);
    ASSERT_EQ(t.markers.size(), 2u);
    EXPECT_EQ(t.markers[0].name, "a step of the training loop");
    EXPECT_EQ(t.markers[1].name, "forward");
    for (size_t k = 0; k < 2; ++k) {
        std::vector<uint64_t> times = t.markers[k].ts.take();
        ASSERT_EQ(times.size(), kIterations);
        for (uint64_t i = 0; i < kIterations; ++i)
            ASSERT_EQ(times[i], 100 * i + (k ? 50 : 1)) << "marker " << i << " of " << k;
    }
}

} // namespace
} // namespace gpuleak::analyzer
