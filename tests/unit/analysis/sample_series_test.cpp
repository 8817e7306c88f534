// Samples stored as differences read back exactly as they were written, from any iteration on,
// in a few bytes each.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analysis/sample_series.h"

namespace gpuleak::analyzer {
namespace {

// What a reader started at `iteration` must say, from the samples as written.
struct Expected {
    IterationSample value{0, 0, 0};
    size_t next = 0;
};
Expected expected_at(const std::vector<IterationSample>& samples, uint32_t iteration) {
    Expected e;
    while (e.next < samples.size() && samples[e.next].iteration < iteration)
        e.value = samples[e.next++];
    return e;
}

TEST(SampleSeries, ReadsBackWhatWasWrittenFromAnyIteration) {
    std::mt19937_64 random(7);
    for (int round = 0; round < 40; ++round) {
        size_t n = round < 10 ? static_cast<size_t>(round) : 1 + random() % 700;
        std::vector<IterationSample> written;
        SampleSeries series;
        uint32_t iteration = static_cast<uint32_t>(random() % 3);
        for (size_t i = 0; i < n; ++i) {
            iteration += 1 + static_cast<uint32_t>(random() % 4 == 0 ? random() % 100000 : 0);
            // Up and down, to zero, and across the whole 64-bit range.
            uint64_t bytes = random() % 5 == 0 ? 0 : random() >> (random() % 64);
            uint64_t count = random() % 3 == 0 ? 0 : random() % 1000;
            written.push_back({iteration, bytes, count});
            series.push_back(written.back());
            ASSERT_EQ(series.back(), written.back());
        }
        ASSERT_EQ(series.size(), n);
        std::vector<IterationSample> all;
        series.each([&](const IterationSample& s) { all.push_back(s); });
        ASSERT_EQ(all, written) << "round " << round;
        uint32_t top = written.empty() ? 10 : written.back().iteration + 2;
        for (int probe = 0; probe < 60; ++probe) {
            uint32_t at = probe < 3 ? static_cast<uint32_t>(probe) : random() % top;
            Expected e = expected_at(written, at);
            SampleSeries::Reader r(series, at);
            ASSERT_EQ(r.value(), e.value) << "round " << round << " at " << at;
            for (size_t k = e.next; k < written.size(); ++k, r.advance()) {
                ASSERT_FALSE(r.done());
                ASSERT_EQ(r.next(), written[k]);
            }
            ASSERT_TRUE(r.done());
        }
    }
}

// A pair that leaks every iteration: a sample per iteration, in 5 bytes each here (plus what the
// vector keeps for growing, up to as much again), where the structs took 24 (25 MB for these).
TEST(SampleSeries, AMillionSamplesOfALeakTakeAFewBytesEach) {
    SampleSeries series;
    for (uint32_t i = 1; i <= 1'000'000; ++i)
        series.push_back({i, uint64_t{i} * 1'000'003, i});
    EXPECT_LT(series.memory_bytes(), 10'000'000u);
    SampleSeries::Reader r(series, 777'777);
    EXPECT_EQ(r.value(), (IterationSample{777'776, uint64_t{777'776} * 1'000'003, 777'776}));
    EXPECT_EQ(r.next().iteration, 777'777u);
}

} // namespace
} // namespace gpuleak::analyzer
