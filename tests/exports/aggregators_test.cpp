// The per-event aggregators behind the exports, against brute force: the timeline's buckets keep
// every maximum and end value whatever coarsening did, and stay within their bounds; the
// allocation log keeps a suffix and the live set; the window in front of the aggregators (what it
// leaves out, its bounds in iterations, the loops it narrows); the window's and the comparison's
// parsers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "analysis/aggregate/allocation_log.h"
#include "analysis/aggregate/device_peak.h"
#include "analysis/aggregate/failed_allocations.h"
#include "analysis/aggregate/loop_lifetimes.h"
#include "analysis/aggregate/timeline.h"
#include "analysis/aggregate/totals.h"
#include "analysis/window.h"
#include "compare/baseline.h"

namespace gpuleak::analyzer {
namespace {

Allocation change(uint64_t ts, uint64_t address, uint64_t size, uint32_t site, int device = 0) {
    Allocation a;
    a.ts = ts;
    a.address = address;
    a.size = size;
    a.site = site;
    a.device = device;
    return a;
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
            Allocation a = change(now, next_address++, size, site);
            t.on_alloc(a);
            sum += size;
        } else {
            auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
            t.on_free(change(0, it->first, it->second.first, it->second.second), now, true);
            sum -= it->second.first;
            live.erase(it);
        }
        total.emplace_back(now, sum);
    }
    Report report;
    t.finish(now, report);
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
        Allocation a = change(i * 100, i, 10, site);
        t.on_alloc(a);
        t.on_free(a, i * 100 + 50, true);
    }
    Report report;
    t.finish(200000 * 100, report);
    EXPECT_LE(t.points(), 2 * o.max_points);
    EXPECT_LE(t.buckets(), 512u);
    EXPECT_EQ(t.total().current, 0u);
    EXPECT_EQ(t.total().peak, 10u);
}

TEST(Timeline, MarksAreThinnedEvenly) {
    Timeline::Options o;
    o.max_marks = 100;
    Timeline t(o);
    for (uint32_t i = 1; i <= 1000; ++i) {
        t.add_iteration(1, i * 1000, i);
        if (i <= 50) t.add_iteration(0, i * 20000, i);
    }
    // Per loop: the long loop thinned, the short one whole.
    ASSERT_EQ(t.iterations().size(), 2u);
    const Timeline::Marks& many = t.iterations()[1];
    EXPECT_LE(many.kept.size(), 100u);
    EXPECT_GE(many.kept.size(), 50u);
    EXPECT_EQ(many.seen, 1000u);
    for (size_t i = 0; i < many.kept.size(); ++i)
        EXPECT_EQ(many.kept[i].value, 1 + i * many.stride);
    EXPECT_EQ(t.iterations()[0].kept.size(), 50u);
    EXPECT_EQ(t.iterations()[0].stride, 1u);
}

TEST(Timeline, MarksEveryLoopsIterations) {
    Loops loops;
    Loop a, b;
    a.id = 0;
    a.starts = {10, 20, 30};
    b.id = 1;
    b.starts = {12, 14};
    loops.loops = {a, b};
    Timeline t;
    t.add_iterations(loops);
    ASSERT_EQ(t.iterations().size(), 2u);
    ASSERT_EQ(t.iterations()[0].kept.size(), 3u);
    EXPECT_EQ(t.iterations()[0].kept[2].ts, 30u);
    EXPECT_EQ(t.iterations()[0].kept[2].value, 3u);
    ASSERT_EQ(t.iterations()[1].kept.size(), 2u);
    EXPECT_EQ(t.iterations()[1].kept[0].value, 1u);
}

TEST(AllocationLog, KeepsTheLastRecordsAndTheLiveSet) {
    AllocationLog log(5);
    for (uint64_t i = 0; i < 10; ++i) {
        Allocation a = change(i, 100 + i, 10 + i, 1);
        log.on_alloc(a);
    }
    for (uint64_t i = 0; i < 4; ++i)
        log.on_free(change(i, 100 + i, 10 + i, 1), 20 + i, true);
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

// Counts what reaches it.
struct Recorder : TimedAggregator {
    std::vector<uint64_t> born, died, times;
    uint64_t unpaired = 0, failed = 0, end_ts = 0;
    void on_time(uint64_t ts) override { times.push_back(ts); }
    void on_alloc(Allocation& a) override { born.push_back(a.address); }
    void on_free(const Allocation& a, uint64_t, bool) override { died.push_back(a.address); }
    void on_failed(const FailedAllocation&) override { ++failed; }
    void on_unpaired_free(const format::Record&) override { ++unpaired; }
    void finish(uint64_t ts, Report&) override { end_ts = ts; }
};

format::Record free_of(uint64_t ts, uint64_t address) {
    format::Record r;
    r.tag = format::Tag::Free;
    r.ts = ts;
    r.address = address;
    return r;
}

TEST(Window, FreesOfAllocationsLeftOutAreLeftOut) {
    WindowOptions o;
    o.min_bytes = 100;
    Window w(o);
    std::string error;
    ASSERT_TRUE(w.resolve(Loops{}, error)) << error;
    Recorder seen;
    w.set_inner({&seen});
    Pairing p({&w});
    p.time(1);
    p.alloc(change(1, 0x1000, 10, 0), 0x1000, false); // too small
    p.time(2);
    p.alloc(change(2, 0x2000, 1000, 1), 0x2000, false);
    p.time(3);
    p.free(free_of(3, 0x1000));
    p.time(4);
    p.free(free_of(4, 0x2000));
    EXPECT_EQ(seen.born, std::vector<uint64_t>{0x2000});
    EXPECT_EQ(seen.died, std::vector<uint64_t>{0x2000});
    EXPECT_EQ(seen.unpaired, 0u);
    // The address is free again: a free of it now is a free of unknown memory, passed on.
    p.time(5);
    p.free(free_of(5, 0x1000));
    EXPECT_EQ(seen.unpaired, 1u);
}

// One loop of five iterations starting at 100, 200, ..., 500, ending at 600.
Loops five_iterations() {
    Loops loops;
    Loop l;
    l.source = "inferred";
    l.starts = {100, 200, 300, 400, 500};
    l.end_ts = 600;
    l.runs_to_end = true;
    l.allocations = 10;
    loops.loops = {l};
    loops.teardown_ts = 599;
    loops.end_ts = 700;
    return loops;
}

TEST(Window, IterationsOfTheMainLoop) {
    WindowOptions o;
    o.from = parse_window_bound("2it");
    o.to = parse_window_bound("3it");
    Window w(o);
    std::string error;
    ASSERT_TRUE(w.resolve(five_iterations(), error)) << error;
    // From the start of iteration 2 to the end of iteration 3.
    EXPECT_FALSE(w.in_time(199));
    EXPECT_TRUE(w.in_time(200));
    EXPECT_TRUE(w.in_time(399));
    EXPECT_FALSE(w.in_time(400));
    Loops narrow = w.narrow(five_iterations());
    const Loop& l = narrow.loops[0];
    EXPECT_EQ(l.starts, (std::vector<uint64_t>{200, 300}));
    // It ends between two iterations: its last one in the window is whole.
    EXPECT_EQ(l.end_ts, 400u);
    EXPECT_FALSE(l.runs_to_end);
    EXPECT_EQ(narrow.teardown_ts, 399u);

    // The same in seconds, ending inside iteration 3: cut short there.
    WindowOptions s;
    s.from = parse_window_bound("200ns");
    s.to = parse_window_bound("350ns");
    Window ws(s);
    ASSERT_TRUE(ws.resolve(five_iterations(), error)) << error;
    Loops cut = ws.narrow(five_iterations());
    EXPECT_EQ(cut.loops[0].starts, (std::vector<uint64_t>{200, 300}));
    EXPECT_EQ(cut.loops[0].end_ts, 351u);
    EXPECT_TRUE(cut.loops[0].runs_to_end);

    // Without a loop there are no iterations to count.
    EXPECT_FALSE(w.resolve(Loops{}, error));
    EXPECT_NE(error.find("no loop"), std::string::npos) << error;
}

TEST(Window, AggregatorsBehindItFinishAtItsEnd) {
    WindowOptions o;
    o.from = parse_window_bound("2it");
    o.to = parse_window_bound("3it");
    Window w(o);
    std::string error;
    ASSERT_TRUE(w.resolve(five_iterations(), error)) << error;
    Recorder seen;
    Totals totals;
    w.set_inner({&seen, &totals});
    Pairing p({&w});
    uint64_t address = 0x1000;
    // Per iteration one allocation kept, at its start.
    for (uint64_t ts : {100, 200, 300, 400, 500}) {
        p.time(ts);
        p.alloc(change(ts, address, 64, 0), address, false);
        address += 64;
    }
    // The iteration 2 allocation freed in iteration 5: after the window, so live at its end.
    p.time(550);
    p.free(free_of(550, 0x1040));
    Report report;
    p.finish(700, report);
    EXPECT_EQ(seen.born, (std::vector<uint64_t>{0x1040, 0x1080}));
    EXPECT_TRUE(seen.died.empty());
    EXPECT_EQ(seen.times, (std::vector<uint64_t>{200, 300}));
    EXPECT_EQ(seen.end_ts, 300u);
    ASSERT_EQ(report.sites.size(), 1u);
    EXPECT_EQ(report.sites[0].allocations, 2u);
    EXPECT_EQ(report.sites[0].live_count_end[0], 2u);
    EXPECT_EQ(report.summary.unknown_frees, 0u);
    EXPECT_EQ(report.summary.events, 2u);
}

// A timed aggregator is told a time only once it reaches what it asked for (wake_ts), and counts
// every event it was shown: as of its last wake, and all of them at the end, whether it woke for
// the last ones or not.
TEST(TimedAggregator, ToldTimesFromWhatItAsksAndCountsEveryEvent) {
    struct Sleeper : Recorder {
        explicit Sleeper(uint64_t wake) { wake_ts_ = wake; }
    } sleeper(30), never(1000);
    Recorder every;
    Pairing p({&never, &sleeper, &every});
    for (uint64_t ts : {10, 20, 30, 30, 40})
        p.time(ts);
    EXPECT_EQ(sleeper.times, (std::vector<uint64_t>{30, 30, 40}));
    EXPECT_EQ(every.times, (std::vector<uint64_t>{10, 20, 30, 30, 40}));
    EXPECT_TRUE(never.times.empty());
    EXPECT_EQ(sleeper.events(), 5u);
    EXPECT_EQ(every.events(), 5u);

    // Alone, a sleeper is counted at its wakes and at the end.
    Sleeper late(30), later(1000);
    Pairing alone({&late, &later});
    for (uint64_t ts : {10, 20, 30, 35, 40, 45})
        alone.time(ts);
    EXPECT_EQ(late.times, (std::vector<uint64_t>{30, 35, 40, 45}));
    Report report;
    alone.finish(50, report);
    EXPECT_EQ(late.events(), 6u);
    EXPECT_EQ(later.events(), 6u);
    EXPECT_TRUE(later.times.empty());
}

// A failed allocation's snapshot is what DevicePeak holds live on the devices at that moment, in
// all and by site, largest first: device memory only, frees and vanished blocks taken off.
TEST(FailedAllocations, SnapshotWhatIsLiveOnTheDevicesAtTheFailure) {
    DevicePeak peak;
    FailedAllocations failed(peak);
    Pairing p({&peak, &failed});
    auto alloc = [&](uint64_t ts, uint64_t address, uint64_t size, uint32_t site,
                     format::MemKind kind = format::MemKind::Device) {
        Allocation a = change(ts, address, size, site);
        a.kind = kind;
        p.time(ts);
        p.alloc(a, address, false);
    };
    format::Record request;
    request.tag = format::Tag::AllocFailed;
    request.size = 1 << 30;
    request.result = 2;
    auto fail = [&](uint64_t ts, uint32_t site) {
        p.time(ts);
        p.failed({ts, site, 0, &request});
    };
    alloc(10, 0x1000, 300, 1);
    alloc(20, 0x2000, 500, 2);
    alloc(30, 0x3000, 700, 3, format::MemKind::Managed); // not device memory
    alloc(40, 0x4000, 100, 1);
    fail(50, 4);
    p.time(60);
    p.free(free_of(60, 0x2000));
    alloc(70, 0x1000, 50, 5); // 0x1000 came back without a free: its block is gone
    fail(80, 4);
    Report report;
    p.finish(90, report);
    ASSERT_EQ(report.ooms.size(), 2u);
    EXPECT_EQ(report.ooms[0].requested, 1u << 30);
    EXPECT_EQ(report.ooms[0].site, 4u);
    // (live bytes, then (site, bytes) largest first)
    using Snapshot = std::pair<uint64_t, std::vector<std::pair<uint32_t, uint64_t>>>;
    auto snapshot = [](const OomEvent& oom) {
        Snapshot s{oom.live_bytes, {}};
        for (const auto& b : oom.by_site)
            s.second.emplace_back(b.site, b.bytes);
        return s;
    };
    EXPECT_EQ(snapshot(report.ooms[0]), (Snapshot{900, {{2, 500}, {1, 400}}}));
    EXPECT_EQ(snapshot(report.ooms[1]), (Snapshot{150, {{1, 100}, {5, 50}}}));
}

// LoopLifetimes asks for the time only at its next iteration boundary and at the teardown: the
// same results as when told every event's time, with events falling exactly on boundaries, one
// nanosecond either side of them, and on the teardown.
TEST(LoopLifetimes, AskingForBoundariesOnlyChangesNothing) {
    Loops loops = five_iterations();
    loops.teardown_ts = 555;
    for (uint32_t site = 0; site < 4; ++site)
        loops.by_site_thread[uint64_t{site} << 32] = 0;
    std::mt19937_64 random(7);
    std::vector<uint64_t> times = {99,  100, 101, 199, 200, 201, 300, 399,
                                   400, 500, 555, 556, 557, 600, 601};
    for (int i = 0; i < 300; ++i)
        times.push_back(90 + random() % 530);
    std::sort(times.begin(), times.end());
    LoopLifetimes asking(loops), told(loops);
    Pairing pairing({&asking});
    std::vector<std::pair<uint64_t, Allocation>> live; // (address, allocation told)
    uint64_t next_address = 0x1000;
    for (uint64_t ts : times) {
        pairing.time(ts);
        told.on_time(ts);
        if (live.empty() || random() % 2) {
            Allocation a = change(ts, next_address, 64 + random() % 64, random() % 4);
            pairing.alloc(a, next_address, false);
            told.on_alloc(a);
            live.push_back({next_address, a});
            next_address += 0x100;
        } else {
            size_t k = random() % live.size();
            pairing.free(free_of(ts, live[k].first));
            told.on_free(live[k].second, ts, true);
            live.erase(live.begin() + static_cast<long>(k));
        }
    }
    Report by_asking, by_telling;
    pairing.finish(700, by_asking);
    told.finish(700, by_telling);
    auto dump = [](const LoopLifetimes& l) {
        std::string out;
        for (const SiteLoopStats& p : l.pairs()) {
            out += std::to_string(p.site) + " " + std::to_string(p.allocations) + " " +
                   std::to_string(p.first_iteration) + " " + std::to_string(p.outlived) + " " +
                   std::to_string(p.teardown_count) + " " + std::to_string(p.emptied_ts) + ":";
            p.series.each([&](const IterationSample& s) {
                out += " " + std::to_string(s.iteration) + "=" + std::to_string(s.bytes) + "/" +
                       std::to_string(s.count);
            });
            out += "\n";
        }
        return out;
    };
    EXPECT_EQ(dump(asking), dump(told));
    EXPECT_FALSE(dump(told).empty());
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
