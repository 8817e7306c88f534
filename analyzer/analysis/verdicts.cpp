#include "analysis/verdicts.h"

#include <algorithm>
#include <unordered_map>

namespace gpuleak::analyzer {
namespace {

struct Fit {
    double slope = 0;
    double r2 = 0;
};

Fit fit_line(const std::vector<double>& y, size_t from = 0, size_t to = ~size_t{0}) {
    to = std::min(to, y.size());
    size_t n = to > from ? to - from : 0;
    if (n < 2) return {};
    double mx = (n - 1) / 2.0, my = 0;
    for (size_t i = from; i < to; ++i)
        my += y[i];
    my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; ++i) {
        sxy += (i - mx) * (y[from + i] - my);
        sxx += (i - mx) * (i - mx);
        syy += (y[from + i] - my) * (y[from + i] - my);
    }
    Fit f;
    f.slope = sxx > 0 ? sxy / sxx : 0;
    f.r2 = syy > 0 && sxx > 0 ? (sxy * sxy) / (sxx * syy) : 0;
    return f;
}

// The series densified over iterations [first, last], carrying values forward.
void dense_series(const std::vector<IterationSample>& series, uint32_t first, uint32_t last,
                  std::vector<double>& bytes, std::vector<double>& counts) {
    bytes.clear();
    counts.clear();
    uint64_t b = 0, c = 0;
    size_t i = 0;
    for (uint32_t k = 0; k <= last; ++k) {
        while (i < series.size() && series[i].iteration == k) {
            b = series[i].bytes;
            c = series[i].count;
            ++i;
        }
        if (k >= first) {
            bytes.push_back(static_cast<double>(b));
            counts.push_back(static_cast<double>(c));
        }
    }
}

// The last third never comes back down to what the first third reached, and the rise came in at
// least three steps, or in every step of a shorter loop (one allocation kept for good is
// retained, not a leak).
bool keeps_rising(const std::vector<double>& y) {
    size_t third = y.size() / 3;
    if (third == 0) return false;
    size_t rises = 0;
    for (size_t i = 1; i < y.size(); ++i)
        rises += y[i] > y[i - 1];
    if (rises < std::min<size_t>(3, y.size() - 1)) return false;
    double first_max = *std::max_element(y.begin(), y.begin() + third);
    double last_min = *std::min_element(y.end() - third, y.end());
    return last_min > first_max;
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

bool released_rise(const std::vector<double>& counts, double teardown_count,
                   const std::vector<uint32_t>& run_starts, uint32_t first, Rise& found) {
    size_t start = 0;
    size_t rises = 0;
    for (size_t i = 1; i <= counts.size(); ++i) {
        bool end = i == counts.size();
        if (!end && counts[i] >= counts[i - 1]) {
            rises += counts[i] > counts[i - 1];
            continue;
        }
        double top = counts[i - 1];
        double after = end ? teardown_count : counts[i];
        size_t runs = 1; // iterations first+start .. first+i-1
        for (uint32_t r : run_starts)
            runs += r > first + start && r <= first + i - 1;
        if (runs > 1) rises = std::min(rises, runs - 1);
        if (rises >= kAccumulationSteps && after * 4 <= top) {
            found = {start, i, top};
            return true;
        }
        start = i;
        rises = 0;
    }
    return false;
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
    std::vector<double> bytes, counts;
    dense_series(p.series, first, last, bytes, counts);
    Fit count_fit = fit_line(counts), byte_fit = fit_line(bytes);
    Rise rise;
    if (keeps_rising(counts) && count_fit.slope > 0 && count_fit.r2 >= 0.6) {
        // Held at the teardown, or let go once the loop was over.
        bool kept = static_cast<double>(p.teardown_count) * 2 >= counts.back();
        j.verdict = kept ? Verdict::Leak : Verdict::Accumulation;
        j.growth_bytes_per_iteration = byte_fit.slope;
        j.confidence = count_fit.r2;
        if (!kept)
            j.accumulated_bytes =
                static_cast<uint64_t>(*std::max_element(bytes.begin(), bytes.end()));
    } else if (released_rise(counts, static_cast<double>(p.teardown_count), loop.run_starts, first,
                             rise)) {
        Fit f = fit_line(bytes, rise.from, rise.to);
        j.verdict = Verdict::Accumulation;
        j.growth_bytes_per_iteration = f.slope;
        j.confidence = fit_line(counts, rise.from, rise.to).r2;
        j.accumulated_bytes = static_cast<uint64_t>(
            *std::max_element(bytes.begin() + rise.from, bytes.begin() + rise.to));
    } else if (keeps_rising(bytes) && byte_fit.slope > 0 && byte_fit.r2 >= 0.6) {
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
    for (const IterationSample& s : p.series)
        peak = std::max(peak, s.count);
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
        s.loop = p->loop;
        s.first_iteration = p->first_iteration;
        s.outlived = p->outlived;
        s.series = p->series;
    }
}

std::vector<uint64_t> live_bytes_by_iteration(const SiteStats& site, uint32_t iterations,
                                              size_t points) {
    std::vector<double> bytes, counts;
    dense_series(site.series, 0, iterations, bytes, counts);
    std::vector<uint64_t> out;
    if (bytes.empty()) return out;
    size_t buckets = std::min(points, bytes.size());
    for (size_t b = 0; b < buckets; ++b) {
        size_t from = b * bytes.size() / buckets, to = (b + 1) * bytes.size() / buckets;
        double m = 0;
        for (size_t i = from; i < to; ++i)
            m = std::max(m, bytes[i]);
        out.push_back(static_cast<uint64_t>(m));
    }
    return out;
}

} // namespace gpuleak::analyzer
