#include "analysis/verdicts.h"

#include <algorithm>
#include <unordered_map>

namespace gpuleak::analyzer {
namespace {

// A pair's series over iterations [first, last] as the verdicts read it: every iteration's value
// carried forward from the latest sample at or before it (samples ascend by iteration, as the
// loop-lifetime aggregator writes them at each boundary). Read in order, never laid out: a loop
// of millions of iterations is judged in memory that does not grow with them.
class DenseSeries {
public:
    DenseSeries(const SampleSeries& samples, uint32_t first, uint32_t last)
        : samples_(samples), first_(first), size_(last >= first ? size_t{last} - first + 1 : 0) {}
    size_t size() const { return size_; }
    // f(index, bytes, count) for each index in [from, to), in order, until f returns false.
    template <class F> void each(size_t from, size_t to, F&& f) const {
        to = std::min(to, size_);
        if (from >= to) return;
        // Start at the first iteration wanted, with the latest sample at or before it.
        uint64_t k = first_ + from;
        SampleSeries::Reader next(samples_, static_cast<uint32_t>(k));
        for (; k < first_ + to; ++k) {
            while (!next.done() && next.next().iteration == k)
                next.advance();
            if (!f(static_cast<size_t>(k - first_), static_cast<double>(next.value().bytes),
                   static_cast<double>(next.value().count)))
                return;
        }
    }

private:
    const SampleSeries& samples_;
    uint64_t first_;
    size_t size_;
};

// One of a DenseSeries' two values.
struct Values {
    const DenseSeries& series;
    bool counts; // else bytes
    size_t size() const { return series.size(); }
    template <class F> void each(size_t from, size_t to, F&& f) const {
        series.each(from, to, [&](size_t i, double bytes, double count) {
            return f(i, counts ? count : bytes);
        });
    }
    double max(size_t from = 0, size_t to = ~size_t{0}) const { // values are never negative
        double m = 0;
        each(from, to, [&](size_t, double v) {
            m = std::max(m, v);
            return true;
        });
        return m;
    }
    double min() const {
        double m = 0;
        each(0, size(), [&](size_t i, double v) {
            m = i == 0 ? v : std::min(m, v);
            return true;
        });
        return m;
    }
    double back() const {
        double v = 0;
        each(size() - 1, size(), [&](size_t, double value) {
            v = value;
            return true;
        });
        return v;
    }
};

struct Fit {
    double slope = 0;
    double r2 = 0;
};

Fit fit_line(const Values& y, size_t from = 0, size_t to = ~size_t{0}) {
    to = std::min(to, y.size());
    size_t n = to > from ? to - from : 0;
    if (n < 2) return {};
    double mx = (n - 1) / 2.0, my = 0;
    y.each(from, to, [&](size_t, double v) {
        my += v;
        return true;
    });
    my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    y.each(from, to, [&](size_t index, double v) {
        size_t i = index - from;
        sxy += (i - mx) * (v - my);
        sxx += (i - mx) * (i - mx);
        syy += (v - my) * (v - my);
        return true;
    });
    Fit f;
    f.slope = sxx > 0 ? sxy / sxx : 0;
    f.r2 = syy > 0 && sxx > 0 ? (sxy * sxy) / (sxx * syy) : 0;
    return f;
}

// The last third never comes back down to what the first third reached, and the rise came in at
// least three steps, or in every step of a shorter loop (one allocation kept for good is
// retained, not a leak).
bool keeps_rising(const Values& y) {
    size_t size = y.size(), third = size / 3;
    if (third == 0) return false;
    size_t rises = 0;
    double previous = 0, first_max = 0, last_min = 0;
    y.each(0, size, [&](size_t i, double v) {
        if (i > 0) rises += v > previous;
        if (i < third && (i == 0 || v > first_max)) first_max = v;
        if (i >= size - third && (i == size - third || v < last_min)) last_min = v;
        previous = v;
        return true;
    });
    if (rises < std::min<size_t>(3, size - 1)) return false;
    return last_min > first_max;
}

// Rose at least twice and never came down: with a count that stays put, a buffer replaced by a
// larger one whenever a larger input comes (a cache keeping its largest, a caching allocator's
// segment), which a rare input may grow early in the loop and then not again, so that the last
// third sits where the first one ended. (A count that rose with it is a bounded cache filling up;
// a single rise, a buffer sized once more after the first iteration.)
bool only_steps_up(const Values& y) {
    size_t rises = 0;
    double previous = 0;
    bool down = false;
    y.each(0, y.size(), [&](size_t i, double v) {
        if (i > 0) {
            rises += v > previous;
            down = v < previous;
        }
        previous = v;
        return !down;
    });
    return !down && rises >= 2;
}

// A stretch of iterations in which the count only rose, at least kAccumulationSteps times, and
// that was then released (to a quarter of its top or less) within the loop or by the teardown.
// A stretch over several runs of the loop (an inner loop, run once per outer iteration) rose once
// per run at most: what it kept was released every few outer iterations, a sawtooth of the outer
// loop, unless it spans kAccumulationSteps runs too.
struct Rise {
    size_t from = 0, to = 0; // [from, to) in the series
    double top = 0;
};

bool released_rise(const Values& counts, double teardown_count,
                   const std::vector<uint32_t>& run_starts, uint32_t first, Rise& found) {
    // The runs begun in iterations (from, to]; run_starts ascend.
    auto runs_begun = [&](size_t from, size_t to) {
        auto after = [&](size_t k) {
            return std::upper_bound(run_starts.begin(), run_starts.end(), k,
                                    [](size_t a, uint32_t r) { return a < r; });
        };
        return to > from ? static_cast<size_t>(after(to) - after(from)) : size_t{0};
    };
    size_t start = 0, rises = 0;
    bool released = false;
    // The stretch [start, i), whose top is `top`, followed by `after`.
    auto ends = [&](size_t i, double top, double after) {
        size_t runs = 1 + runs_begun(first + start, first + i - 1);
        if (runs > 1) rises = std::min(rises, runs - 1);
        if (rises >= kAccumulationSteps && after * 4 <= top) {
            found = {start, i, top};
            released = true;
            return true;
        }
        start = i;
        rises = 0;
        return false;
    };
    double previous = 0;
    counts.each(0, counts.size(), [&](size_t i, double v) {
        if (i > 0) {
            if (v >= previous)
                rises += v > previous;
            else if (ends(i, previous, v))
                return false;
        }
        previous = v;
        return true;
    });
    if (released || counts.size() == 0) return released;
    return ends(counts.size(), previous, teardown_count);
}

// A rise that began in the last third and was still under way when the loop ended (a leak begun
// late in the run: outputs kept from some epoch or condition on), which keeps_rising reads as
// flat: the last third never comes down, rises at least kAccumulationSteps times, the last time
// in its second half, and ends at least kAccumulationSteps above anything the first two thirds
// held. Its slope is read from where it began. The unfinished last tooth of a sawtooth, or of a
// list cleared after each epoch, comes down or stays below the teeth before it; a bounded cache
// filled late has stopped rising.
bool rises_through_the_last_third(const Values& counts, Rise& found) {
    const size_t size = counts.size(), third = size / 3, from = size - third;
    if (third == 0) return false;
    size_t rises = 0, first_rise = 0, last_rise = 0;
    bool down = false;
    double previous = 0;
    counts.each(from - 1, size, [&](size_t i, double v) {
        if (i >= from) {
            down = down || v < previous;
            if (v > previous) {
                if (!rises++) first_rise = i;
                last_rise = i;
            }
        }
        previous = v;
        return !down;
    });
    if (down || rises < kAccumulationSteps || last_rise < size - third / 2) return false;
    if (previous < counts.max(0, from) + kAccumulationSteps) return false;
    found = {first_rise - 1, size, previous}; // from the level it rose from
    return true;
}

} // namespace

const char* verdict_name(Verdict v) {
    switch (v) {
    case Verdict::Transient:
        return "transient";
    case Verdict::Retained:
        return "retained";
    case Verdict::Growth:
        return "growth";
    case Verdict::Accumulation:
        return "accumulation";
    case Verdict::Leak:
        return "leak";
    case Verdict::None:
        break;
    }
    return "none";
}

Judgement judge(const SiteLoopStats& p, const Loop& loop, uint32_t warmup) {
    Judgement j;
    // A loop still running at the teardown: its last iteration was cut short by the end of the
    // program (what it allocated last is still in flight), so it is not compared.
    uint32_t last = loop.iterations();
    if (loop.runs_to_end && last > 3) last -= 1;
    uint32_t first = std::min(last, warmup + 1);
    bool holds = p.outlived || p.teardown_count;
    if (last < first + 2) {
        j.verdict = holds ? Verdict::Retained : Verdict::Transient;
        return j;
    }
    if (!p.outlived) {
        j.verdict = Verdict::Transient;
        return j;
    }
    DenseSeries series(p.series, first, last);
    Values bytes{series, false}, counts{series, true};
    Fit count_fit = fit_line(counts), byte_fit = fit_line(bytes);
    Rise rise;
    if (keeps_rising(counts) && count_fit.slope > 0 && count_fit.r2 >= 0.6) {
        // Held at the teardown, or let go once the loop was over.
        bool kept = static_cast<double>(p.teardown_count) * 2 >= counts.back();
        j.verdict = kept ? Verdict::Leak : Verdict::Accumulation;
        j.growth_bytes_per_iteration = byte_fit.slope;
        j.confidence = count_fit.r2;
        if (!kept) j.accumulated_bytes = static_cast<uint64_t>(bytes.max());
    } else if (released_rise(counts, static_cast<double>(p.teardown_count), loop.run_starts, first,
                             rise)) {
        Fit f = fit_line(bytes, rise.from, rise.to);
        j.verdict = Verdict::Accumulation;
        j.growth_bytes_per_iteration = f.slope;
        j.confidence = fit_line(counts, rise.from, rise.to).r2;
        j.accumulated_bytes = static_cast<uint64_t>(bytes.max(rise.from, rise.to));
    } else if (rises_through_the_last_third(counts, rise) &&
               static_cast<double>(p.teardown_count) * 2 >= rise.top) {
        j.verdict = Verdict::Leak;
        j.growth_bytes_per_iteration = fit_line(bytes, rise.from, rise.to).slope;
        j.confidence = fit_line(counts, rise.from, rise.to).r2;
    } else if ((keeps_rising(bytes) && byte_fit.slope > 0 && byte_fit.r2 >= 0.6) ||
               (only_steps_up(bytes) && counts.max() == counts.min())) {
        j.verdict = Verdict::Growth;
        j.growth_bytes_per_iteration = byte_fit.slope;
        j.confidence = byte_fit.r2;
    } else {
        j.verdict = Verdict::Retained;
    }
    return j;
}

namespace {

uint64_t peak_count(const SiteLoopStats& p) {
    uint64_t peak = 0;
    p.series.each([&](const IterationSample& s) { peak = std::max(peak, s.count); });
    return peak;
}

// A leak that only the end of the trace made one. The same site in the same loop run by other
// threads before it rose as far and was released before this thread's loop began: a pool's worker
// in the last epoch, whose results the program still uses when it exits, does what the workers of
// every epoch before it did. Such a leak takes the verdict of those threads. A worker that keeps
// what the others release (the others never rose as far), threads that all keep theirs, and
// threads that ran side by side and are released one by one at the exit stay leaks.
void forgive_leaks_cut_by_the_end(const std::vector<SiteLoopStats>& pairs, const Loops& loops,
                                  std::vector<Judgement>& judged) {
    auto inferred = [&](const SiteLoopStats& p) {
        return p.loop >= 0 && p.thread != kPooledThreads &&
               loops.loops[p.loop].source == "inferred";
    };
    std::unordered_map<uint32_t, std::vector<size_t>> by_site;
    for (size_t i = 0; i < pairs.size(); ++i)
        if (inferred(pairs[i])) by_site[pairs[i].site].push_back(i);
    for (auto& [site, indices] : by_site) {
        if (indices.size() < 2) continue;
        for (size_t i : indices) {
            const SiteLoopStats& p = pairs[i];
            if (judged[i].verdict != Verdict::Leak) continue;
            const Judgement* released = nullptr;
            for (size_t k : indices) {
                const SiteLoopStats& q = pairs[k];
                Verdict v = judged[k].verdict;
                if (q.thread == p.thread || q.teardown_count || !q.outlived || !q.emptied_ts ||
                    q.emptied_ts >= loops.loops[p.loop].starts.front() ||
                    (v != Verdict::Accumulation && v != Verdict::Retained) ||
                    loops.loops[q.loop].head != loops.loops[p.loop].head ||
                    peak_count(q) * 2 < p.teardown_count)
                    continue;
                if (!released || v > released->verdict) released = &judged[k];
            }
            if (released) judged[i] = *released;
        }
    }
}

// See verdicts.h: the leaks of a loop that only builds are retained.
void settle_setup_loops(const std::vector<SiteLoopStats>& pairs, const Loops& loops,
                        std::vector<Judgement>& judged) {
    // Per loop: whether something made in it, in a loop nested in it or in one it is nested in
    // (a step that frees, whose inner loop over micro-batches keeps) was freed while it ran.
    std::vector<bool> freed(loops.loops.size(), false), frees(loops.loops.size(), false);
    for (const SiteLoopStats& p : pairs)
        if (p.loop >= 0 && p.freed_while_looping) freed[p.loop] = true;
    auto within = [](const Loop& inner, const Loop& outer) {
        return inner.thread == outer.thread && inner.starts.front() >= outer.starts.front() &&
               inner.end_ts <= outer.end_ts;
    };
    for (const Loop& q : loops.loops)
        if (freed[q.id])
            for (const Loop& l : loops.loops)
                if (within(q, l) || within(l, q)) frees[l.id] = true;
    for (size_t i = 0; i < pairs.size(); ++i) {
        const SiteLoopStats& p = pairs[i];
        const Verdict was = judged[i].verdict;
        if ((was != Verdict::Leak && was != Verdict::Accumulation) || p.loop < 0) continue;
        const Loop& l = loops.loops[p.loop];
        if (l.source != "inferred" || frees[l.id] || l.runs_to_end) continue;
        // A loop inside one call of a library from a line in no loop (moving a model's
        // parameters to the device) is bounded by that call.
        const bool one_call = l.head_outside_loops && l.run_starts.size() == 1;
        const Loop* held_through = nullptr; // the one with most allocations: the main work
        for (const Loop& later : loops.loops)
            if (later.id != l.id && later.thread == l.thread && later.starts.front() >= l.end_ts &&
                later.iterations() >= 3 && later.allocations >= l.allocations &&
                (!held_through || later.allocations > held_through->allocations))
                held_through = &later;
        // Released, it was held through that loop (a model freed when its training returns), not
        // cleared before it ran (a list filled and emptied).
        if (was == Verdict::Accumulation && held_through &&
            p.emptied_ts < held_through->starts.back())
            held_through = nullptr;
        if (!held_through && !one_call) continue;
        judged[i] = Judgement{};
        judged[i].verdict = Verdict::Retained;
        judged[i].retained_because =
            one_call ? RetainedBecause::BuiltInOneCall : RetainedBecause::HeldThroughLaterLoop;
        judged[i].held_through = one_call ? int64_t{-1} : int64_t{held_through->id};
    }
}

// See verdicts.h: what a caching allocator grew early in a run and never again is its working set.
void settle_cache_warm_ups(const std::vector<SiteLoopStats>& pairs, const Loops& loops,
                           std::vector<Judgement>& judged) {
    for (size_t i = 0; i < pairs.size(); ++i) {
        const SiteLoopStats& p = pairs[i];
        if (judged[i].verdict != Verdict::Leak || p.loop < 0) continue;
        const Loop& l = loops.loops[p.loop];
        if (l.source != "inferred" || !l.seen_through_cache) continue;
        // The process's exit is the only time seen after the cache's last growth here (nothing
        // else reaches the driver), and it comes after the interpreter's and the driver's
        // teardown, hence the floor. The pinned-memory cache grows for a new batch shape once.
        uint64_t last = l.starts.back();
        if (p.pinned_host) last = std::clamp(p.last_repeated_power_ts, l.starts.front(), last);
        const uint64_t span = last - l.starts.front();
        if (loops.end_ts < last ||
            loops.end_ts - last < std::max(kCacheQuietFactor * span, kCacheQuietFloorNs))
            continue;
        judged[i] = Judgement{};
        judged[i].verdict = Verdict::Retained;
        judged[i].retained_because = RetainedBecause::CacheWarmUp;
    }
}

// See verdicts.h: a cache that grows by ever larger segments grows for ever larger requests.
void settle_cache_growth(const std::vector<SiteLoopStats>& pairs, const Loops& loops,
                         std::vector<Judgement>& judged) {
    for (size_t i = 0; i < pairs.size(); ++i) {
        const SiteLoopStats& p = pairs[i];
        if (judged[i].verdict == Verdict::Leak && p.loop >= 0 && p.each_larger &&
            loops.loops[p.loop].seen_through_cache)
            judged[i].verdict = Verdict::Growth;
    }
}

} // namespace

void decide_verdicts(const std::vector<SiteLoopStats>& pairs, const Loops& loops, Report& report) {
    std::vector<const SiteLoopStats*> chosen(report.sites.size(), nullptr);
    std::vector<Judgement> best(report.sites.size());
    bool any_loop = !loops.loops.empty();
    std::vector<Judgement> judged(pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) {
        const SiteLoopStats& p = pairs[i];
        if (p.site >= report.sites.size() || !any_loop) continue;
        if (p.loop >= 0)
            judged[i] = judge(p, loops.loops[p.loop], loops.warmup);
        else
            judged[i].verdict = p.teardown_count ? Verdict::Retained : Verdict::Transient;
    }
    forgive_leaks_cut_by_the_end(pairs, loops, judged);
    settle_setup_loops(pairs, loops, judged);
    settle_cache_warm_ups(pairs, loops, judged);
    settle_cache_growth(pairs, loops, judged);
    for (size_t i = 0; i < pairs.size(); ++i) {
        const SiteLoopStats& p = pairs[i];
        if (p.site >= report.sites.size()) continue;
        SiteStats& s = report.sites[p.site];
        s.live_at_teardown += p.teardown_count;
        s.live_bytes_at_teardown += p.teardown_bytes;
        if (p.loop >= 0) s.threads += 1;
        if (!any_loop) continue;
        const Judgement& j = judged[i];
        Judgement& b = best[p.site];
        if (!chosen[p.site] || j.verdict > b.verdict ||
            (j.verdict == b.verdict &&
             j.growth_bytes_per_iteration > b.growth_bytes_per_iteration) ||
            (j.verdict == b.verdict && chosen[p.site]->loop < 0 && p.loop >= 0)) {
            b = j;
            chosen[p.site] = &p;
        }
    }
    for (SiteStats& s : report.sites) {
        const SiteLoopStats* p = chosen[s.site];
        if (!p) continue;
        const Judgement& j = best[s.site];
        s.verdict = j.verdict;
        s.growth_bytes_per_iteration = j.growth_bytes_per_iteration;
        s.confidence = j.confidence;
        s.accumulated_bytes = j.accumulated_bytes;
        s.retained_because = j.retained_because;
        s.held_through = j.held_through;
        s.loop = p->loop;
        s.first_iteration = p->first_iteration;
        s.outlived = p->outlived;
        s.series = p->series;
    }
}

std::vector<uint64_t> live_bytes_by_iteration(const SiteStats& site, uint32_t iterations,
                                              size_t points) {
    DenseSeries series(site.series, 0, iterations);
    std::vector<uint64_t> out;
    size_t size = series.size(), buckets = std::min(points, size);
    if (buckets == 0) return out;
    // Bucket b holds [b * size / buckets, (b + 1) * size / buckets): never empty, as size >=
    // buckets.
    double top = 0;
    series.each(0, size, [&](size_t i, double bytes, double) {
        top = std::max(top, bytes);
        if (i + 1 == (out.size() + 1) * size / buckets) {
            out.push_back(static_cast<uint64_t>(top));
            top = 0;
        }
        return true;
    });
    return out;
}

} // namespace gpuleak::analyzer
