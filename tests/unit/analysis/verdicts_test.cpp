// Verdicts from lifetimes, without a trace: events go through the pairing and the loop-lifetime
// aggregator with loops given by hand, as the replay of a real trace would feed them.
#include <gtest/gtest.h>

#include <map>

#include "analysis/aggregate/loop_lifetimes.h"
#include "analysis/aggregate/totals.h"
#include "analysis/replay.h"
#include "analysis/verdicts.h"
#include "support/heap_counter.h"

namespace gpuleak::analyzer {
namespace {

Loop make_loop(uint32_t id, uint32_t thread, uint64_t first, uint64_t step, uint32_t n,
               uint64_t end, bool runs_to_end) {
    Loop l;
    l.id = id;
    l.source = "inferred";
    l.thread = thread;
    for (uint32_t i = 0; i < n; ++i)
        l.starts.push_back(first + i * step);
    l.end_ts = end;
    l.runs_to_end = runs_to_end;
    return l;
}

// A program fed event by event; times in ns.
class Program {
public:
    explicit Program(Loops loops) : loops_(std::move(loops)), lifetimes_(loops_) {}
    uint64_t alloc(uint64_t ts, uint32_t site, uint64_t size = 1000, uint32_t thread = 1,
                   format::MemKind kind = format::MemKind::Device) {
        pairing_.time(ts);
        Allocation a;
        a.ts = ts;
        a.size = size;
        a.site = site;
        a.thread = thread;
        a.kind = kind;
        uint64_t address = next_address_ += 4096;
        pairing_.alloc(a, address, false);
        return address;
    }
    void free(uint64_t ts, uint64_t address) {
        pairing_.time(ts);
        format::Record r;
        r.tag = format::Tag::Free;
        r.ts = ts;
        r.address = address;
        pairing_.free(r);
    }
    Report finish(uint64_t end_ts) {
        Report report;
        pairing_.finish(end_ts, report);
        return report;
    }
    Loops loops_;

private:
    Totals totals_;
    LoopLifetimes lifetimes_;
    Pairing pairing_{{&totals_, &lifetimes_}};
    uint64_t next_address_ = 0;
};

Loops with(std::vector<Loop> loops, std::vector<std::pair<uint32_t, uint32_t>> site_loop,
           uint64_t teardown, uint32_t thread = 1) {
    Loops out;
    out.loops = std::move(loops);
    out.teardown_ts = teardown;
    for (auto [site, loop] : site_loop)
        out.by_site_thread[uint64_t{site} << 32 | thread] = loop;
    return out;
}

// The first case: a loop keeps something every iteration, a second loop runs after it and
// keeps nothing; the kept memory is still there at the end. Judged over its own loop: a leak.
TEST(Verdicts, LeakInTheFirstLoopStaysALeakWhileASecondLoopRuns) {
    // Loop 0: 30 iterations at 100..3000; loop 1: 30 more at 4000..; teardown at 7000.
    Program run(with(
        {make_loop(0, 1, 100, 100, 30, 3100, false), make_loop(1, 1, 4000, 100, 30, 7001, true)},
        {{0, 0}, {1, 0}, {2, 1}}, 7000));
    std::vector<uint64_t> kept;
    for (int i = 0; i < 30; ++i) {
        uint64_t t = 100 + i * 100;
        uint64_t x = run.alloc(t + 1, 0);
        kept.push_back(run.alloc(t + 2, 1, 5000));
        run.free(t + 3, x);
    }
    for (int i = 0; i < 30; ++i) {
        uint64_t t = 4000 + i * 100;
        run.free(t + 2, run.alloc(t + 1, 2));
    }
    for (uint64_t k : kept)
        run.free(7500, k); // the program's exit
    Report r = run.finish(8000);
    ASSERT_EQ(r.sites.size(), 3u);
    EXPECT_EQ(r.sites[1].verdict, Verdict::Leak);
    EXPECT_NEAR(r.sites[1].growth_bytes_per_iteration, 5000, 1);
    EXPECT_EQ(r.sites[1].live_at_teardown, 30u);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Transient);
    EXPECT_EQ(r.sites[2].verdict, Verdict::Transient);
}

// A loop of 6 iterations (100..600) keeps what each makes (site 0: a model's layers), then a
// training loop of 30 (1000..3900, site 1 transient) runs with it unchanged; kept to the end.
struct BuildThenTrain {
    bool build_frees = false;    // the build loop also frees something it made (site 2)
    bool nested_in_free = false; // the build loop runs inside an outer loop (0..800) that frees
    bool training = true;        // the later loop is there
    uint64_t training_allocations = 60;
    std::string build_source = "inferred";
    bool head_outside_loops = false;  // a library's loop inside one call from a line in no loop
    bool called_twice = false;        // that call made twice (two runs of the loop)
    bool seen_through_cache = false;  // every allocation of the build loop a cache's segment
    bool inside_another_loop = false; // the source shows a loop statement around it
    uint64_t exit_ts = 0;             // the process's exit
    uint64_t released_at = 0;         // when what the build loop made is freed (0: never)
};

Report build_then_train(const BuildThenTrain& o) {
    std::vector<Loop> loops = {make_loop(0, 1, 100, 100, 6, 700, false)};
    loops[0].source = o.build_source;
    loops[0].allocations = 6;
    loops[0].head_outside_loops = o.head_outside_loops;
    loops[0].run_starts = o.called_twice ? std::vector<uint32_t>{1, 4} : std::vector<uint32_t>{1};
    std::vector<std::pair<uint32_t, uint32_t>> sites = {{0, 0}, {2, 0}};
    if (o.training) {
        loops.push_back(make_loop(1, 1, 1000, 100, 30, 4000, false));
        loops.back().allocations = o.training_allocations;
        sites.push_back({1, 1});
    }
    if (o.nested_in_free) {
        loops.push_back(make_loop(static_cast<uint32_t>(loops.size()), 1, 50, 400, 2, 800, false));
        sites.push_back({3, static_cast<uint32_t>(loops.size() - 1)});
    }
    Program run(with(loops, sites, 5000));
    if (o.nested_in_free) {
        run.free(60, run.alloc(55, 3));
        run.free(460, run.alloc(455, 3));
    }
    std::vector<uint64_t> built;
    for (int i = 0; i < 6; ++i) {
        uint64_t t = 100 + i * 100;
        built.push_back(run.alloc(t + 1, 0, 1 << 20));
        if (o.build_frees && i == 3) run.free(t + 3, run.alloc(t + 2, 2));
    }
    auto release = [&] {
        for (uint64_t address : built)
            run.free(o.released_at, address);
    };
    if (o.released_at && o.released_at < 1000) release();
    if (o.training)
        for (int i = 0; i < 30; ++i) {
            uint64_t t = 1000 + i * 100;
            run.free(t + 2, run.alloc(t + 1, 1));
        }
    if (o.released_at >= 1000) release();
    run.alloc(4500, 4); // after every loop: the program goes on
    return run.finish(6000);
}

TEST(Verdicts, WhatALoopThatOnlyBuildsKeepsIsRetainedWhileALaterLoopRunsWithItUnchanged) {
    Report built = build_then_train({});
    EXPECT_EQ(built.sites[0].verdict, Verdict::Retained);
    EXPECT_EQ(built.sites[0].held_through, 1);
    EXPECT_EQ(built.sites[0].live_at_teardown, 6u);
    EXPECT_EQ(built.sites[1].verdict, Verdict::Transient);
    // A loop that frees something it made is not building alone: what it keeps leaks.
    BuildThenTrain frees;
    frees.build_frees = true;
    Report r = build_then_train(frees);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Leak);
    EXPECT_EQ(r.sites[0].held_through, -1);
    // Nor is one that runs inside a loop that frees (micro-batches of a step).
    BuildThenTrain nested;
    nested.nested_in_free = true;
    EXPECT_EQ(build_then_train(nested).sites[0].verdict, Verdict::Leak);
    // Nothing ran with it held unchanged, or less than the build did.
    BuildThenTrain alone;
    alone.training = false;
    EXPECT_EQ(build_then_train(alone).sites[0].verdict, Verdict::Leak);
    BuildThenTrain shorter;
    shorter.training_allocations = 5;
    EXPECT_EQ(build_then_train(shorter).sites[0].verdict, Verdict::Leak);
    // Marked iterations are the user's word that each one is a step.
    BuildThenTrain marked;
    marked.build_source = "markers";
    EXPECT_EQ(build_then_train(marked).sites[0].verdict, Verdict::Leak);
}

// A model's layers built in a training function, trained, then freed when it returns (a phase of
// the program after it): the build loop's rise and release read as an accumulation, and are the
// same bounded model as one kept to the end. Released before the later loop ran, it was a list
// filled and cleared: still an accumulation.
TEST(Verdicts, WhatALoopThatOnlyBuildsKeepsThroughALaterLoopAndThenFreesIsRetained) {
    BuildThenTrain trained;
    trained.released_at = 4200;
    Report r = build_then_train(trained);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Retained);
    EXPECT_EQ(r.sites[0].retained_because, RetainedBecause::HeldThroughLaterLoop);
    EXPECT_EQ(r.sites[0].held_through, 1);
    BuildThenTrain cleared;
    cleared.released_at = 900;
    EXPECT_EQ(build_then_train(cleared).sites[0].verdict, Verdict::Accumulation);
    BuildThenTrain frees = trained;
    frees.build_frees = true;
    EXPECT_EQ(build_then_train(frees).sites[0].verdict, Verdict::Accumulation);
}

// model.cuda(): a library's loop inside one call of a line in no loop statement. Bounded by that
// call, with or without a loop after it; a line called twice (two runs) is not one call.
TEST(Verdicts, WhatALibrarysLoopInsideOneCallBuildsIsRetained) {
    BuildThenTrain once;
    once.head_outside_loops = true;
    once.training = false;
    Report r = build_then_train(once);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Retained);
    EXPECT_EQ(r.sites[0].retained_because, RetainedBecause::BuiltInOneCall);
    EXPECT_EQ(r.sites[0].held_through, -1);
    BuildThenTrain twice = once;
    twice.called_twice = true;
    EXPECT_EQ(build_then_train(twice).sites[0].verdict, Verdict::Leak);
    BuildThenTrain frees = once;
    frees.build_frees = true;
    EXPECT_EQ(build_then_train(frees).sites[0].verdict, Verdict::Leak);
}

// A loop of 8 iterations, `step` ns apart from `step` on, each growing site 0 by one segment that
// is kept; the process exits at `exit_ts`.
struct CacheGrowth {
    bool seen_through_cache = true; // every allocation of the loop a caching allocator's segment
    std::string source = "inferred";
    uint64_t step = 1'000'000;
    uint64_t exit_ts = 8'000'000 + kCacheQuietFloorNs;
    bool larger_each_time = false; // each segment larger than the one before it
};

Report cache_growth(const CacheGrowth& o) {
    Loop l = make_loop(0, 1, o.step, o.step, 8, 9 * o.step, false);
    l.source = o.source;
    l.seen_through_cache = o.seen_through_cache;
    Program run(with({l}, {{0, 0}}, 9 * o.step + 1));
    run.loops_.end_ts = o.exit_ts;
    for (uint64_t i = 1; i <= 8; ++i)
        run.alloc(i * o.step + 1, 0, o.larger_each_time ? i << 21 : 2 << 20);
    run.alloc(9 * o.step + 1, 1); // after the loop: the program goes on
    return run.finish(o.exit_ts);
}

// The first steps of a training run seen only through the segments PyTorch's caching allocator
// grew for them (it keeps them, and the later steps reuse them unseen): retained when the process
// then ran on for three times as long, and at least a second, before its exit.
TEST(Verdicts, WhatACachingAllocatorGrewOnlyEarlyInARunIsRetained) {
    Report r = cache_growth({});
    EXPECT_EQ(r.sites[0].verdict, Verdict::Retained);
    EXPECT_EQ(r.sites[0].retained_because, RetainedBecause::CacheWarmUp);
    EXPECT_EQ(r.sites[0].live_at_teardown, 8u);
    // Tensors, not segments: their loop keeping them is what a leak is.
    CacheGrowth tensors;
    tensors.seen_through_cache = false;
    EXPECT_EQ(cache_growth(tensors).sites[0].verdict, Verdict::Leak);
    // The exit came less than a second after: the interpreter's teardown alone may take that long.
    CacheGrowth soon;
    soon.exit_ts -= 1;
    EXPECT_EQ(cache_growth(soon).sites[0].verdict, Verdict::Leak);
    // Growing for 7 s (iterations 1 s apart) and quiet for less than 21 s after: still growing,
    // as far as anything shows.
    CacheGrowth slow;
    slow.step = 1'000'000'000;
    slow.exit_ts = 8 * slow.step + 3 * (7 * slow.step) - 1;
    EXPECT_EQ(cache_growth(slow).sites[0].verdict, Verdict::Leak);
    slow.exit_ts += 1;
    EXPECT_EQ(cache_growth(slow).sites[0].verdict, Verdict::Retained);
    // A trace without an end record ends at its last event.
    CacheGrowth killed;
    killed.exit_ts = 0;
    EXPECT_EQ(cache_growth(killed).sites[0].verdict, Verdict::Leak);
    // Marked iterations are the user's word that each one is a step.
    CacheGrowth marked;
    marked.source = "markers";
    EXPECT_EQ(cache_growth(marked).sites[0].verdict, Verdict::Leak);
}

// Segments each larger than the last: the cache could not reuse what was freed for a larger
// request (inputs growing), which grows what it reserves, not what the program keeps.
TEST(Verdicts, ACachingAllocatorGrowingByEverLargerSegmentsIsGrowth) {
    CacheGrowth growing;
    growing.larger_each_time = true;
    growing.exit_ts = 0; // no warm-up: growing to the end
    Report r = cache_growth(growing);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Growth);
    EXPECT_GT(r.sites[0].growth_bytes_per_iteration, 0);
    // Segments of one size keep coming: something keeps what they hold.
    CacheGrowth same = growing;
    same.larger_each_time = false;
    EXPECT_EQ(cache_growth(same).sites[0].verdict, Verdict::Leak);
    // Tensors each larger than the last, all kept: a leak.
    CacheGrowth tensors = growing;
    tensors.seen_through_cache = false;
    EXPECT_EQ(cache_growth(tensors).sites[0].verdict, Verdict::Leak);
}

// A loop seen through a cache, 8 iterations 1 s apart from 1 s on: site 0 grows by a 1 MiB block
// in each of the first four and by one of `last_size` in the eighth, all kept; the process exits
// 10 s after the loop's last iteration began.
Report late_block(uint64_t last_size, format::MemKind kind) {
    const uint64_t step = 1'000'000'000;
    Loop l = make_loop(0, 1, step, step, 8, 9 * step, false);
    l.seen_through_cache = true;
    Program run(with({l}, {{0, 0}}, 9 * step + 1));
    run.loops_.end_ts = 18 * step;
    for (uint64_t i = 1; i <= 4; ++i)
        run.alloc(i * step + 1, 0, 1 << 20, 1, kind);
    run.alloc(8 * step + 1, 0, last_size, 1, kind);
    run.alloc(9 * step + 1, 1);
    return run.finish(18 * step);
}

// DataLoader(pin_memory=True): PyTorch's pinned-memory cache grows by a block per batch in flight
// in the first steps, and once more, late in the first epoch, for its shorter last batch: a block
// of a new power of two, a new shape rather than more batches held at once, so the warm-up ends
// with the fourth block (quiet 14 s after it, three times its 3 s span). A block of a power it had
// made before, that late, is more batches held: the warm-up is the whole loop (7 s), too long for
// the 10 s after it. Device segments are not read per power of two.
TEST(Verdicts, APinnedCachesBlockForANewBatchShapeDoesNotProlongItsWarmUp) {
    Report shorter = late_block(512 << 10, format::MemKind::PinnedHost);
    EXPECT_EQ(shorter.sites[0].verdict, Verdict::Retained);
    EXPECT_EQ(shorter.sites[0].retained_because, RetainedBecause::CacheWarmUp);
    EXPECT_EQ(late_block(1 << 20, format::MemKind::PinnedHost).sites[0].verdict, Verdict::Leak);
    // Not a power of two, but of the same power as the first blocks: one more batch held.
    EXPECT_EQ(late_block(1 << 20 | 4096, format::MemKind::PinnedHost).sites[0].verdict,
              Verdict::Leak);
    EXPECT_EQ(late_block(512 << 10, format::MemKind::Device).sites[0].verdict, Verdict::Leak);
}

TEST(Verdicts, ReleasedAfterItsLoopWhileTheProgramGoesOnIsAnAccumulation) {
    Program run(with(
        {make_loop(0, 1, 100, 100, 30, 3100, false), make_loop(1, 1, 4000, 100, 10, 5001, true)},
        {{0, 0}, {1, 1}}, 5000));
    std::vector<uint64_t> kept;
    for (int i = 0; i < 30; ++i)
        kept.push_back(run.alloc(100 + i * 100 + 1, 0, 2000));
    for (uint64_t k : kept)
        run.free(3500, k); // the list goes out of scope
    for (int i = 0; i < 10; ++i)
        run.free(4000 + i * 100 + 2, run.alloc(4000 + i * 100 + 1, 1));
    Report r = run.finish(6000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Accumulation);
    EXPECT_NEAR(r.sites[0].growth_bytes_per_iteration, 2000, 1);
    EXPECT_EQ(r.sites[0].accumulated_bytes, 60000u);
}

TEST(Verdicts, ListClearedAfterEveryEpochIsAnAccumulation) {
    // One loop of 3 x 12 batches; the list is emptied after every 12th.
    Program run(with({make_loop(0, 1, 100, 100, 36, 3701, true)}, {{0, 0}}, 3700));
    std::vector<uint64_t> list;
    for (int i = 0; i < 36; ++i) {
        list.push_back(run.alloc(100 + i * 100 + 1, 0));
        if (i % 12 == 11) {
            for (uint64_t k : list)
                run.free(100 + i * 100 + 50, k);
            list.clear();
        }
    }
    Report r = run.finish(4000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Accumulation);
}

TEST(Verdicts, SawtoothOfAFewIterationsIsRetained) {
    Program run(with({make_loop(0, 1, 100, 100, 32, 3301, true)}, {{0, 0}}, 3300));
    std::vector<uint64_t> grads;
    for (int i = 0; i < 32; ++i) {
        grads.push_back(run.alloc(100 + i * 100 + 1, 0));
        if (grads.size() == 4) {
            for (uint64_t k : grads)
                run.free(100 + i * 100 + 50, k);
            grads.clear();
        }
    }
    Report r = run.finish(4000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Retained);
}

// Micro-batches (an inner loop of 3) kept until the optimizer step every 4th outer iteration:
// 12 rises of the inner loop in a row, but over 4 of its runs: a sawtooth of the outer loop.
TEST(Verdicts, RiseOverAFewRunsOfAnInnerLoopIsRetained) {
    Loop inner = make_loop(0, 1, 100, 100, 48, 4901, true);
    for (uint32_t run = 1; run <= 48; run += 3)
        inner.run_starts.push_back(run);
    Program run(with({inner}, {{0, 0}}, 4900));
    std::vector<uint64_t> pending;
    for (int i = 0; i < 48; ++i) {
        pending.push_back(run.alloc(100 + i * 100 + 1, 0));
        if (i % 12 == 11) {
            for (uint64_t k : pending)
                run.free(100 + i * 100 + 50, k);
            pending.clear();
        }
    }
    EXPECT_EQ(run.finish(6000).sites[0].verdict, Verdict::Retained);
}

TEST(Verdicts, BoundedCacheAndTheLastLoopVariableAreRetained) {
    Program run(with({make_loop(0, 1, 100, 100, 30, 3101, true)}, {{0, 0}, {1, 0}}, 3100));
    std::vector<uint64_t> cache;
    uint64_t previous = 0;
    for (int i = 0; i < 30; ++i) {
        uint64_t t = 100 + i * 100;
        cache.push_back(run.alloc(t + 1, 0));
        if (cache.size() > 5) {
            run.free(t + 2, cache.front());
            cache.erase(cache.begin());
        }
        uint64_t out = run.alloc(t + 3, 1);
        if (previous) run.free(t + 4, previous);
        previous = out;
    }
    Report r = run.finish(4000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Retained);
    EXPECT_EQ(r.sites[1].verdict, Verdict::Retained);
}

// Outputs kept only from iteration `from` on, of `n`, each 2000 bytes, held to the end; the loop
// variable is rebound each iteration (one output always live).
Report kept_from(int n, int from, int sawtooth = 0, int cache = 0) {
    const uint64_t end = 100 + n * 100 + 1;
    Program run(with({make_loop(0, 1, 100, 100, n, end, true)}, {{0, 0}}, end - 1));
    std::vector<uint64_t> kept;
    uint64_t previous = 0;
    for (int i = 0; i < n; ++i) {
        uint64_t t = 100 + i * 100;
        uint64_t out = run.alloc(t + 1, 0, 2000);
        if (i >= from) {
            kept.push_back(out);
            out = 0;
        }
        if (sawtooth && static_cast<int>(kept.size()) == sawtooth) {
            for (uint64_t k : kept)
                run.free(t + 2, k);
            kept.clear();
        }
        if (cache && static_cast<int>(kept.size()) > cache) {
            run.free(t + 2, kept.front());
            kept.erase(kept.begin());
        }
        if (previous) run.free(t + 3, previous);
        previous = out;
    }
    return run.finish(end + 1000);
}

// A leak begun in the last third of the run (outputs kept from some epoch on): the loop's first
// two thirds are flat, so the rise over the whole loop fits no line, yet it is still rising at the
// end and far above anything before it.
TEST(Verdicts, ALeakBegunInTheLastThirdIsALeak) {
    for (auto [n, from] : {std::pair{30, 20}, {60, 48}, {200, 170}}) {
        Report r = kept_from(n, from);
        EXPECT_EQ(r.sites[0].verdict, Verdict::Leak) << n << " " << from;
        EXPECT_NEAR(r.sites[0].growth_bytes_per_iteration, 2000, 1) << n << " " << from;
    }
}

// What a late rise must not be: too few steps to tell (4 outputs kept at the end: retained), the
// unfinished last epoch of a list cleared every 10 iterations, held at the end but no higher than
// the epochs before it (accumulation, as without it), and a bounded cache that filled up late and
// stopped rising (retained).
TEST(Verdicts, AShortLateRiseALastEpochOrALateFilledCacheIsNoLeak) {
    EXPECT_EQ(kept_from(30, 26).sites[0].verdict, Verdict::Retained);
    EXPECT_EQ(kept_from(57, 0, 10).sites[0].verdict, Verdict::Accumulation);
    EXPECT_EQ(kept_from(90, 62, 0, 8).sites[0].verdict, Verdict::Retained);
}

TEST(Verdicts, GrowingSizesAreGrowth) {
    Program run(with({make_loop(0, 1, 100, 100, 20, 2101, true)}, {{0, 0}}, 2100));
    uint64_t buffer = 0;
    for (int i = 0; i < 20; ++i) {
        uint64_t bigger = run.alloc(100 + i * 100 + 1, 0, 1000 * (i + 1));
        if (buffer) run.free(100 + i * 100 + 2, buffer);
        buffer = bigger;
    }
    Report r = run.finish(3000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Growth);
    EXPECT_NEAR(r.sites[0].growth_bytes_per_iteration, 1000, 1);
}

// A cache keeping the largest buffer it was asked for: a few rare large inputs early in a loop of
// 50 grow it, then it stays. The last third holds what the first third ended with, yet it grew.
TEST(Verdicts, ABufferReplacedByLargerOnesOnRareInputsIsGrowth) {
    Program run(with({make_loop(0, 1, 100, 100, 50, 5101, true)}, {{0, 0}}, 5100));
    const std::map<int, uint64_t> larger = {{0, 500}, {1, 520}, {2, 1500}, {4, 3000}, {13, 5000}};
    uint64_t buffer = 0;
    for (int i = 0; i < 50; ++i) {
        auto size = larger.find(i);
        if (size == larger.end()) continue;
        uint64_t bigger = run.alloc(100 + i * 100 + 1, 0, size->second);
        if (buffer) run.free(100 + i * 100 + 2, buffer);
        buffer = bigger;
    }
    Report r = run.finish(6000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Growth);
}

// Replaced once by a larger one (the first real input after a small one): held, not growing.
TEST(Verdicts, ABufferReplacedOnceByALargerOneIsRetained) {
    Program run(with({make_loop(0, 1, 100, 100, 50, 5101, true)}, {{0, 0}}, 5100));
    uint64_t buffer = run.alloc(101, 0, 500);
    run.free(402, buffer);
    buffer = run.alloc(401, 0, 3000);
    Report r = run.finish(6000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Retained);
}

// The same single buffer, its size following each input up and down: held, not growing.
TEST(Verdicts, ABufferSizedByEachInputIsRetained) {
    Program run(with({make_loop(0, 1, 100, 100, 50, 5101, true)}, {{0, 0}}, 5100));
    uint64_t buffer = 0;
    for (int i = 0; i < 50; ++i) {
        uint64_t sized = run.alloc(100 + i * 100 + 1, 0, 1000 + (i * 7919) % 3000);
        if (buffer) run.free(100 + i * 100 + 2, buffer);
        buffer = sized;
    }
    Report r = run.finish(6000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Retained);
}

TEST(Verdicts, ConcurrentChurnInEveryThreadIsTransient) {
    // Four threads, each with its own loop, each freeing within the iteration; their iterations
    // overlap in time, so at any boundary of one thread another's allocation is live.
    std::vector<Loop> loops;
    for (uint32_t t = 0; t < 4; ++t)
        loops.push_back(make_loop(t, t + 1, 100 + t * 7, 100, 20, 2200, true));
    Loops l;
    l.loops = loops;
    l.teardown_ts = 2150;
    for (uint32_t t = 0; t < 4; ++t)
        l.by_site_thread[uint64_t{0} << 32 | (t + 1)] = t;
    Program run(std::move(l));
    for (int i = 0; i < 20; ++i)
        for (uint32_t t = 0; t < 4; ++t) {
            uint64_t start = 100 + t * 7 + i * 100;
            uint64_t a = run.alloc(start + 1, 0, 100, t + 1);
            run.free(start + 60, a); // after the next thread's boundary, within its own
        }
    Report r = run.finish(3000);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Transient);
    EXPECT_EQ(r.sites[0].threads, 4u);
}

// Two threads run the same loop one after the other (a worker per epoch), each keeping 4 buffers
// through it. `first_keeps`: thread 1's are never freed; else released after its loop (at
// `release`), or, with `first_bounded`, each freed in the next iteration. Thread 2's are still
// held at the teardown.
Report two_workers(bool first_keeps, bool first_bounded = false, uint64_t release = 600) {
    Loops l;
    l.loops = {make_loop(0, 1, 100, 100, 4, 500, false), make_loop(1, 2, 1000, 100, 4, 1401, true)};
    l.teardown_ts = 1400;
    l.by_site_thread[uint64_t{0} << 32 | 1] = 0;
    l.by_site_thread[uint64_t{0} << 32 | 2] = 1;
    Program run(std::move(l));
    std::vector<uint64_t> first, second;
    for (int i = 0; i < 4; ++i) {
        first.push_back(run.alloc(100 + i * 100 + 1, 0, 1000, 1));
        if (first_bounded && i > 0) run.free(100 + i * 100 + 2, first[i - 1]);
    }
    bool released = first_keeps;
    for (uint64_t i = 0; i < 4; ++i) {
        if (!released && release < 1000 + i * 100) {
            for (size_t k = first_bounded ? 3 : 0; k < first.size(); ++k)
                run.free(release, first[k]);
            released = true;
        }
        second.push_back(run.alloc(1000 + i * 100 + 1, 0, 1000, 2));
    }
    for (uint64_t k : second)
        run.free(2000, k); // the exit, after the program's last allocation
    return run.finish(3000);
}

TEST(Verdicts, WhatOtherThreadsOfTheLoopReleasedIsNoLeakWhereTheEndCutItShort) {
    Report r = two_workers(false);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Accumulation);
    EXPECT_EQ(r.sites[0].threads, 2u);
    EXPECT_EQ(r.sites[0].live_at_teardown, 4u);
}

TEST(Verdicts, ALeakStaysWhereTheOtherThreadsKeptTheirsOrNeverRoseAsFar) {
    EXPECT_EQ(two_workers(true).sites[0].verdict, Verdict::Leak);
    // Thread 1 held one buffer at a time (retained): thread 2's rise to 4 is its own.
    Report bounded = two_workers(false, true);
    EXPECT_EQ(bounded.sites[0].verdict, Verdict::Leak);
    // Thread 1's were released while thread 2's loop ran: not before it, so not the same story
    // (threads side by side, their results freed one by one at the exit, look so).
    EXPECT_EQ(two_workers(false, false, 1150).sites[0].verdict, Verdict::Leak);
}

// A job of millions of iterations that keeps one buffer every thousand: judged, and drawn, from
// its few thousand samples, never from a value per iteration laid out in memory (32 MB here).
TEST(Verdicts, ALongLoopIsJudgedWithoutAValuePerIterationInMemory) {
    constexpr uint32_t kIterations = 2'000'000;
    Program run(with({make_loop(0, 1, 100, 100, kIterations, 100 + kIterations * 100ull, true)},
                     {{0, 0}}, 100 + kIterations * 100ull));
    for (uint32_t i = 0; i < kIterations; i += 1000)
        run.alloc(100 + i * 100ull + 1, 0, 1000);
    test::heap_mark();
    Report r = run.finish(200 + kIterations * 100ull);
    std::vector<uint64_t> sparkline = live_bytes_by_iteration(r.sites[0], kIterations, 60);
    EXPECT_LT(test::heap_peak_above_mark(), size_t{1} << 20);
    EXPECT_EQ(r.sites[0].verdict, Verdict::Leak);
    EXPECT_NEAR(r.sites[0].growth_bytes_per_iteration, 1.0, 0.01);
    ASSERT_EQ(sparkline.size(), 60u);
    EXPECT_EQ(sparkline.front(), 34'000u); // the first 33 334 iterations end with 34 kept
    EXPECT_EQ(sparkline.back(), 2'000'000u);
}

// The sparkline's buckets of a short loop: each the largest value carried into it.
TEST(Verdicts, SparklineBucketsHoldTheirLargestIterationCarriedForward) {
    SiteStats s;
    for (IterationSample sample : {IterationSample{2, 10, 1}, {3, 5, 1}, {7, 40, 2}})
        s.series.push_back(sample);
    // Iterations 0..9 carry 0 0 10 5 5 5 5 40 40 40; four buckets of 2, 3, 2 and 3 of them.
    EXPECT_EQ(live_bytes_by_iteration(s, 9, 4), (std::vector<uint64_t>{0, 10, 5, 40}));
    EXPECT_EQ(live_bytes_by_iteration(s, 9, 100).size(), 10u);
    EXPECT_EQ(live_bytes_by_iteration(s, 9, 100)[3], 5u);
}

TEST(Verdicts, WithoutLoopsNothingIsJudged) {
    Program run(with({}, {}, 100));
    run.alloc(10, 0);
    Report r = run.finish(200);
    EXPECT_EQ(r.sites[0].verdict, Verdict::None);
}

} // namespace
} // namespace gpuleak::analyzer
