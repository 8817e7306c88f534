#include "analysis/verdicts.h"

#include <algorithm>

namespace gpuleak::analyzer {
namespace {

struct Fit {
    double slope = 0;
    double r2 = 0;
};

Fit fit_line(const std::vector<double>& y) {
    size_t n = y.size();
    if (n < 2) return {};
    double mx = (n - 1) / 2.0, my = 0;
    for (double v : y)
        my += v;
    my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; ++i) {
        sxy += (i - mx) * (y[i] - my);
        sxx += (i - mx) * (i - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    Fit f;
    f.slope = sxx > 0 ? sxy / sxx : 0;
    f.r2 = syy > 0 && sxx > 0 ? (sxy * sxy) / (sxx * syy) : 0;
    return f;
}

// The series densified over iterations [first, last], carrying values forward.
void dense_series(const SiteStats& s, uint32_t first, uint32_t last, std::vector<double>& bytes,
                  std::vector<double>& counts) {
    bytes.clear();
    counts.clear();
    uint64_t b = 0, c = 0;
    size_t i = 0;
    for (uint32_t k = 0; k <= last; ++k) {
        while (i < s.series.size() && s.series[i].iteration == k) {
            b = s.series[i].bytes;
            c = s.series[i].count;
            ++i;
        }
        if (k >= first) {
            bytes.push_back(static_cast<double>(b));
            counts.push_back(static_cast<double>(c));
        }
    }
}

// The last third never comes back down to what the first third reached, and the rise came in at
// least three steps (one allocation kept for good is retained, not a leak).
bool keeps_rising(const std::vector<double>& y) {
    size_t third = y.size() / 3;
    if (third == 0) return false;
    int rises = 0;
    for (size_t i = 1; i < y.size(); ++i)
        rises += y[i] > y[i - 1];
    if (rises < 3) return false;
    double first_max = *std::max_element(y.begin(), y.begin() + third);
    double last_min = *std::min_element(y.end() - third, y.end());
    return last_min > first_max;
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
    case Verdict::Leak:
        return "leak";
    case Verdict::None:
        break;
    }
    return "none";
}

void decide_verdicts(Report& report, const Iterations& iterations) {
    // After the last boundary come the last iteration and the program's teardown, which frees what
    // a leak held (a Python program releases everything at exit): judge the iterations before it.
    uint32_t last = iterations.count() > 3 ? iterations.count() - 1 : iterations.count();
    uint32_t first = std::min(last, iterations.warmup + 1);
    std::vector<double> bytes, counts;
    for (SiteStats& s : report.sites) {
        if (!s.allocations) continue;
        bool holds_at_end = s.live_count_end[0] + s.live_count_end[1] + s.live_count_end[2] > 0;
        if (last - first + 1 < 3) {
            s.verdict = holds_at_end || s.outlived ? Verdict::Retained : Verdict::Transient;
            continue;
        }
        if (!s.outlived) {
            s.verdict = Verdict::Transient;
            continue;
        }
        dense_series(s, first, last, bytes, counts);
        Fit count_fit = fit_line(counts), byte_fit = fit_line(bytes);
        if (keeps_rising(counts) && count_fit.slope > 0 && count_fit.r2 >= 0.6) {
            s.verdict = Verdict::Leak;
            s.growth_bytes_per_iteration = byte_fit.slope;
            s.confidence = count_fit.r2;
        } else if (keeps_rising(bytes) && byte_fit.slope > 0 && byte_fit.r2 >= 0.6) {
            s.verdict = Verdict::Growth;
            s.growth_bytes_per_iteration = byte_fit.slope;
            s.confidence = byte_fit.r2;
        } else {
            s.verdict = Verdict::Retained;
        }
    }
}

std::vector<uint64_t> live_bytes_by_iteration(const SiteStats& site, uint32_t iterations,
                                              size_t points) {
    std::vector<double> bytes, counts;
    dense_series(site, 0, iterations, bytes, counts);
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
