// The per-event aggregators behind the exports, against brute force: the timeline's buckets keep
// every maximum and end value whatever coarsening did, and stay within their bounds; the
// allocation log keeps a suffix and the live set; the window's and the comparison's parsers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "analysis/lifetimes.h"
#include "analysis/timeline.h"
#include "analysis/window.h"
#include "compare/baseline.h"

namespace gpuleak::analyzer {
namespace {

LiveChange change(uint64_t ts, uint64_t address, uint64_t size, uint32_t site, int device = 0) {
    LiveChange c;
    c.ts = ts;
    c.address = address;
    c.size = size;
    c.site = site;
    c.device = device;
    return c;
}

TEST(Timeline, BucketsKeepMaximaAndEndValuesThroughCoarsening) {
    Timeline::Options o;
    o.max_buckets = 64;
    o.initial_bucket_ns = 1;
    Timeline t(o);
    std::mt19937_64 rng(7);
    std::map<uint64_t, std::pair<uint64_t, uint32_t>> live; // address -> (size, site)
    std::vector<std::pair<uint64_t, uint64_t>> total;       // (ts, total after the change)
    uint64_t now = 0, sum = 0, next_address = 1;
    for (int i = 0; i < 20000; ++i) {
        now += rng() % 5000;
        if (live.empty() || rng() % 3) {
            uint64_t size = 1 + rng() % 100000;
            uint32_t site = static_cast<uint32_t>(rng() % 5);
            live[next_address] = {size, site};
            t.on_alloc(change(now, next_address++, size, site));
            sum += size;
        } else {
            auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
            t.on_free(change(now, it->first, it->second.first, it->second.second));
            sum -= it->second.first;
            live.erase(it);
        }
        total.emplace_back(now, sum);
    }
    t.on_end(now);
    ASSERT_LE(t.buckets(), 64u);
    uint64_t w = t.bucket_ns();
    std::vector<uint64_t> max = t.dense(t.total(), true), last = t.dense(t.total(), false);
    // Brute force per bucket: the maximum of the values held in it, and the value at its end.
    std::vector<uint64_t> want_max(t.buckets(), 0), want_last(t.buckets(), 0);
    uint64_t held = 0;
    size_t k = 0;
    for (uint32_t b = 0; b < t.buckets(); ++b) {
        uint64_t m = held; // the value carried into the bucket holds from its start
        while (k < total.size() && total[k].first < (b + 1) * w) {
            held = total[k].second;
            m = std::max(m, held);
            ++k;
        }
        want_max[b] = m;
        want_last[b] = held;
    }
    EXPECT_EQ(max, want_max);
    EXPECT_EQ(last, want_last);
    EXPECT_EQ(t.total().current, sum);
    EXPECT_EQ(*std::max_element(max.begin(), max.end()), t.total().peak);
    // The sites' end values add up to the total's in every bucket.
    std::vector<uint64_t> sites(t.buckets(), 0);
    for (uint32_t s = 0; s < t.site_count(); ++s) {
        auto v = t.dense(*t.site(s), false);
        for (size_t b = 0; b < v.size(); ++b)
            sites[b] += v[b];
    }
    EXPECT_EQ(sites, last);
}

TEST(Timeline, PointsStayBoundedWithManySites) {
    Timeline::Options o;
    o.max_buckets = 512;
    o.max_points = 4096;
    Timeline t(o);
    for (uint64_t i = 0; i < 200000; ++i) {
        auto site = static_cast<uint32_t>(i % 1000);
        t.on_alloc(change(i * 100, i, 10, site));
        t.on_free(change(i * 100 + 50, i, 10, site));
    }
    t.on_end(200000 * 100);
    EXPECT_LE(t.points(), 2 * o.max_points);
    EXPECT_LE(t.buckets(), 512u);
    EXPECT_EQ(t.total().current, 0u);
    EXPECT_EQ(t.total().peak, 10u);
}

TEST(Timeline, MarksAreThinnedEvenly) {
    Timeline::Options o;
    o.max_marks = 100;
    Timeline t(o);
    for (uint32_t i = 1; i <= 1000; ++i)
        t.on_iteration(i * 1000, i);
    EXPECT_LE(t.iterations().size(), 100u);
    EXPECT_EQ(t.iteration_count(), 1000u);
    for (size_t i = 0; i < t.iterations().size(); ++i)
        EXPECT_EQ(t.iterations()[i].value, 1 + i * t.iteration_stride());
}

TEST(AllocationLog, KeepsTheLastRecordsAndTheLiveSet) {
    AllocationLog log(5);
    for (uint64_t i = 0; i < 10; ++i)
        log.on_alloc(change(i, 100 + i, 10 + i, 1));
    for (uint64_t i = 0; i < 4; ++i)
        log.on_free(change(20 + i, 100 + i, 10 + i, 1));
    EXPECT_EQ(log.records().size(), 5u);
    EXPECT_EQ(log.dropped(), 9u);
    EXPECT_EQ(log.records().front().address, 109u); // the last allocation, then four frees
    EXPECT_EQ(log.records().back().action, AllocationLog::Action::Free);
    auto live = log.live();
    ASSERT_EQ(live.size(), 6u);
    EXPECT_EQ(live.front().address, 104u);
    EXPECT_EQ(live.back().size, 19u);
}

TEST(Window, Bounds) {
    auto b = parse_window_bound("12.5");
    ASSERT_TRUE(b);
    EXPECT_FALSE(b->iterations);
    EXPECT_EQ(b->value, 12500000000u);
    EXPECT_EQ(parse_window_bound("300ms")->value, 300000000u);
    EXPECT_EQ(parse_window_bound("40us")->value, 40000u);
    EXPECT_TRUE(parse_window_bound("10it")->iterations);
    EXPECT_EQ(parse_window_bound("10 iter")->value, 10u);
    EXPECT_FALSE(parse_window_bound("1.5it"));
    EXPECT_FALSE(parse_window_bound("soon"));
    EXPECT_FALSE(parse_window_bound("-1"));
    EXPECT_FALSE(parse_window_bound("3parsecs"));
}

TEST(Window, FreesOfAllocationsLeftOutAreLeftOut) {
    WindowOptions o;
    o.min_bytes = 100;
    Window w(o);
    format::Record small;
    small.tag = format::Tag::Alloc;
    small.size = 10;
    small.address = 0x1000;
    format::Record big = small;
    big.size = 1000;
    big.address = 0x2000;
    format::Record free_small;
    free_small.tag = format::Tag::Free;
    free_small.address = 0x1000;
    format::Record free_big = free_small;
    free_big.address = 0x2000;
    EXPECT_FALSE(w.keep(small, 0));
    EXPECT_TRUE(w.keep(big, 0));
    EXPECT_FALSE(w.keep(free_small, 0));
    EXPECT_TRUE(w.keep(free_big, 0));
    // The address is free again: a free of it now is a free of unknown memory, kept.
    EXPECT_TRUE(w.keep(free_small, 0));
}

TEST(Baseline, Thresholds) {
    auto pct = parse_threshold("10%");
    ASSERT_TRUE(pct);
    EXPECT_EQ(pct->allowed(1000), 100u);
    auto size = parse_threshold("64MiB");
    ASSERT_TRUE(size);
    EXPECT_EQ(size->allowed(1), 64u << 20);
    EXPECT_FALSE(parse_threshold("ten%"));
    EXPECT_FALSE(parse_threshold("lots"));
}

} // namespace
} // namespace gpuleak::analyzer
