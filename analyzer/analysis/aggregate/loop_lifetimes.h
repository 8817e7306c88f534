// Each allocation's lifetime in iterations of its loop (analysis/loops.h): the iteration that made
// it and the one in which it was freed, if any; per (site, loop) the live memory at the end of
// every iteration, and what was still live when the program's teardown began (its last allocation).
// From these the verdicts (analysis/verdicts.h) are decided in finish().
#pragma once

#include <map>
#include <queue>
#include <unordered_map>

#include "analysis/loops.h"
#include "analysis/replay.h"

namespace gpuleak::analyzer {

// SiteLoopStats::thread of the pair that counts a site's allocations by every thread without
// loops of its own (analysis/loops.h).
inline constexpr uint32_t kPooledThreads = ~0u;

struct SiteLoopStats {
    uint32_t site = 0;
    int64_t loop = -1;   // -1: allocations made outside every loop
    uint32_t thread = 0; // kPooledThreads: every thread without loops
    uint64_t allocations = 0;
    uint64_t live_count = 0, live_bytes = 0;
    int64_t first_iteration = -1;
    uint64_t outlived = 0; // allocations freed after the iteration that made them, or never
    uint64_t freed_while_looping = 0; // allocations freed before its loop's last iteration ended
    // Sparse: a sample at the end of an iteration in which the pair changed, unless it ended where
    // the previous sample (or 0) left it. Values hold until the next sample.
    SampleSeries series;
    bool changed = false;
    // Live allocations born in the latest iteration it allocated in (`last_birth`).
    uint32_t last_birth = 0;
    uint64_t live_born_last = 0;
    uint64_t teardown_count = 0, teardown_bytes = 0; // live when the teardown began
    uint64_t emptied_ts = 0; // the last time its live count fell to 0 (0: never)
    // Every allocation larger than all before it (a cache growing for ever larger requests).
    bool each_larger = true;
    uint64_t largest = 0;
    // Pinned host memory: its sizes by power of two (bit k: [2^k, 2^(k+1))), and when it last
    // allocated one of a power it had allocated before (0: never). PyTorch's pinned-memory cache
    // keeps blocks per power of two, so its first block of a power is growth for a new batch
    // shape (an epoch's shorter last batch), not more batches held at once.
    bool pinned_host = false;
    uint64_t size_powers = 0;
    uint64_t last_repeated_power_ts = 0;
};

class LoopLifetimes : public TimedAggregator {
public:
    explicit LoopLifetimes(const Loops& loops);
    void on_time(uint64_t ts) override;
    void on_alloc(Allocation& a) override;
    void on_free(const Allocation& a, uint64_t ts, bool freed) override;
    void finish(uint64_t end_ts, Report& report) override;

    // After finish(): every (site, loop) pair.
    const std::vector<SiteLoopStats>& pairs() const { return pairs_; }

private:
    uint32_t slot(uint32_t site, uint32_t thread);
    uint32_t iteration(int64_t loop) const;
    void touch(SiteLoopStats& p, uint32_t slot);
    void cross_boundary(uint32_t loop);
    void take_teardown();
    void wake(); // wake_ts_: the next boundary, or the teardown

    const Loops& loops_;
    std::vector<SiteLoopStats> pairs_;
    std::unordered_map<uint64_t, uint32_t> slots_; // (site << 32 | thread) -> index in pairs_
    std::unordered_map<uint64_t, uint32_t> pooled_slots_; // (site << 32 | loop) -> index in pairs_
    // Per loop: the next start to cross (iteration = starts crossed), whether its end was crossed,
    // and the pairs changed since its last boundary.
    std::vector<uint32_t> crossed_;
    std::vector<bool> ended_;
    std::vector<std::vector<uint32_t>> changed_;
    // Boundaries to come, earliest first: (time, loop).
    using Boundary = std::pair<uint64_t, uint32_t>;
    std::priority_queue<Boundary, std::vector<Boundary>, std::greater<>> boundaries_;
    bool teardown_taken_ = false;
};

} // namespace gpuleak::analyzer
