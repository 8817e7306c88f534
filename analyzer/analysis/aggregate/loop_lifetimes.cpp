#include "analysis/aggregate/loop_lifetimes.h"

#include <algorithm>
#include <bit>

#include "analysis/verdicts.h"

namespace gpuleak::analyzer {

LoopLifetimes::LoopLifetimes(const Loops& loops)
    : loops_(loops), crossed_(loops.loops.size(), 0), ended_(loops.loops.size(), false),
      changed_(loops.loops.size()) {
    for (const Loop& l : loops.loops)
        if (!l.starts.empty()) boundaries_.push({l.starts.front(), l.id});
}

uint32_t LoopLifetimes::iteration(int64_t loop) const {
    if (loop < 0) return 0;
    return ended_[loop] ? crossed_[loop] + 1 : crossed_[loop];
}

uint32_t LoopLifetimes::slot(uint32_t site, uint32_t thread) {
    uint64_t key = uint64_t{site} << 32 | thread;
    auto [it, fresh] = slots_.try_emplace(key, static_cast<uint32_t>(pairs_.size()));
    if (!fresh) return it->second;
    int64_t loop = loops_.loop_of(site, thread);
    if (loop >= 0 && loops_.pools(static_cast<uint32_t>(loop), thread)) {
        // Threads without loops of their own, and rounds of threads, share one pair per site and
        // loop.
        uint64_t pool_key = uint64_t{site} << 32 | static_cast<uint32_t>(loop);
        auto [pool, fresh_pool] = pooled_slots_.try_emplace(pool_key, it->second);
        it->second = pool->second;
        if (!fresh_pool) return it->second;
        thread = kPooledThreads;
    }
    SiteLoopStats p;
    p.site = site;
    p.thread = thread;
    p.loop = loop;
    pairs_.push_back(std::move(p));
    return it->second;
}

void LoopLifetimes::touch(SiteLoopStats& p, uint32_t index) {
    if (p.changed || p.loop < 0) return;
    p.changed = true;
    changed_[p.loop].push_back(index);
}

// The end of an iteration: a sample of every pair of the loop that changed in it.
void LoopLifetimes::cross_boundary(uint32_t loop) {
    const Loop& l = loops_.loops[loop];
    uint32_t ending = crossed_[loop]; // the iteration that ends here (0: before the first)
    if (crossed_[loop] < l.iterations()) {
        crossed_[loop] += 1;
        boundaries_.push(
            {crossed_[loop] < l.iterations() ? l.starts[crossed_[loop]] : l.end_ts, loop});
    } else {
        ended_[loop] = true;
    }
    for (uint32_t index : changed_[loop]) {
        SiteLoopStats& p = pairs_[index];
        p.changed = false;
        if (ending == 0) continue;
        uint64_t last_bytes = p.series.empty() ? 0 : p.series.back().bytes;
        uint64_t last_count = p.series.empty() ? 0 : p.series.back().count;
        if (p.live_bytes != last_bytes || p.live_count != last_count)
            p.series.push_back({ending, p.live_bytes, p.live_count});
    }
    changed_[loop].clear();
}

void LoopLifetimes::take_teardown() {
    teardown_taken_ = true;
    for (SiteLoopStats& p : pairs_) {
        p.teardown_count = p.live_count;
        p.teardown_bytes = p.live_bytes;
    }
}

void LoopLifetimes::on_time(uint64_t ts) {
    // A boundary takes effect before every event at or after its time.
    while (!boundaries_.empty() && boundaries_.top().first <= ts) {
        uint32_t loop = boundaries_.top().second;
        boundaries_.pop();
        cross_boundary(loop);
    }
    if (!teardown_taken_ && ts > loops_.teardown_ts) take_teardown();
    wake();
}

void LoopLifetimes::wake() {
    wake_ts_ = boundaries_.empty() ? ~uint64_t{0} : boundaries_.top().first;
    if (!teardown_taken_ && loops_.teardown_ts < ~uint64_t{0})
        wake_ts_ = std::min(wake_ts_, loops_.teardown_ts + 1);
}

void LoopLifetimes::on_alloc(Allocation& a) {
    if (live_class(a.kind) == 3) return; // another process's memory: never this one's leak
    a.slot = slot(a.site, a.thread);
    SiteLoopStats& p = pairs_[a.slot];
    a.iteration = iteration(p.loop);
    if (p.first_iteration < 0) p.first_iteration = a.iteration;
    p.allocations += 1;
    p.each_larger = p.each_larger && a.size > p.largest;
    p.largest = std::max(p.largest, a.size);
    if (a.kind == format::MemKind::PinnedHost) {
        const uint64_t power = uint64_t{1} << (std::bit_width(a.size | 1) - 1);
        if (p.size_powers & power) p.last_repeated_power_ts = a.ts;
        p.size_powers |= power;
        p.pinned_host = true;
    }
    if (a.iteration != p.last_birth) p.last_birth = a.iteration, p.live_born_last = 0;
    p.live_born_last += 1;
    p.live_count += 1;
    p.live_bytes += a.size;
    touch(p, a.slot);
}

void LoopLifetimes::on_free(const Allocation& a, uint64_t ts, bool) {
    if (a.slot == ~0u) return;
    SiteLoopStats& p = pairs_[a.slot];
    // Freed in the teardown that cut a loop's last iteration short: that is not outliving it.
    bool cut_short = p.loop >= 0 && ended_[p.loop] && loops_.loops[p.loop].runs_to_end &&
                     a.iteration == loops_.loops[p.loop].iterations();
    if (iteration(p.loop) > a.iteration && !cut_short) p.outlived += 1;
    if (p.loop >= 0 && !ended_[p.loop]) p.freed_while_looping += 1;
    if (a.iteration == p.last_birth) p.live_born_last -= 1;
    p.live_count -= 1;
    p.live_bytes -= a.size;
    if (!p.live_count) p.emptied_ts = ts;
    touch(p, a.slot);
}

void LoopLifetimes::finish(uint64_t end_ts, Report& report) {
    on_time(~0ull);
    if (!teardown_taken_) take_teardown();
    (void)end_ts;
    // Never freed: the end of the trace ended their iteration too. Those of the iteration the
    // program's end cut short (an OOM that ends it mid-iteration) are taken to share the fate
    // of the iterations before: they count only where earlier ones outlived theirs.
    for (SiteLoopStats& p : pairs_) {
        bool cut_short = p.loop >= 0 && loops_.loops[p.loop].runs_to_end &&
                         p.last_birth == loops_.loops[p.loop].iterations();
        uint64_t in_cut = cut_short ? p.live_born_last : 0;
        uint64_t before = p.live_count - in_cut;
        p.outlived += before + (p.outlived + before > 0 ? in_cut : 0);
    }
    decide_verdicts(pairs_, loops_, report);
}

} // namespace gpuleak::analyzer
