#include "render/report_access.h"

#include <algorithm>

#include "analysis/verdicts.h"
#include "render/format_util.h"

namespace gpuleak::analyzer::access {

uint64_t pid(const Report& r) {
    return r.summary.pid;
}
const std::string& command(const Report& r) {
    return r.summary.command;
}
const std::vector<SiteStats>& sites(const Report& r) {
    return r.sites;
}
const Site& site(const Report& r, uint32_t id) {
    return r.site_table->site(id);
}
const std::vector<Frame>& frames(const Report& r, uint32_t id) {
    return site(r, id).frames;
}
const Frame* headline(const Report& r, uint32_t id) {
    return site(r, id).headline();
}
std::string label(const Report& r, uint32_t id) {
    const Frame* f = headline(r, id);
    return f ? frame_function(*f) + " at " + frame_location(*f) : "unknown site";
}

std::vector<const SiteStats*> ranked_sites(const Report& r) {
    std::vector<const SiteStats*> out;
    for (const SiteStats& s : r.sites)
        if (s.allocations) out.push_back(&s);
    auto rank = [](const SiteStats* s) {
        return s->verdict == Verdict::Leak ? 0 : s->verdict == Verdict::Growth ? 1 : 2;
    };
    std::stable_sort(out.begin(), out.end(), [&](const SiteStats* a, const SiteStats* b) {
        if (rank(a) != rank(b)) return rank(a) < rank(b);
        if (live_bytes_end(*a) != live_bytes_end(*b))
            return live_bytes_end(*a) > live_bytes_end(*b);
        return a->peak_live_bytes > b->peak_live_bytes;
    });
    return out;
}

std::vector<uint32_t> top_sites_by_peak(const Report& r, size_t n) {
    std::vector<const SiteStats*> all;
    for (const SiteStats& s : r.sites)
        if (s.peak_live_bytes && (s.kinds_seen & 1)) all.push_back(&s);
    std::stable_sort(all.begin(), all.end(), [](const SiteStats* a, const SiteStats* b) {
        // Leaks first: they are what the timeline is for.
        if (is_leak(*a) != is_leak(*b)) return is_leak(*a);
        return a->peak_live_bytes > b->peak_live_bytes;
    });
    std::vector<uint32_t> out;
    for (size_t i = 0; i < all.size() && i < n; ++i)
        out.push_back(all[i]->site);
    return out;
}

uint64_t live_bytes_end(const SiteStats& s) {
    return s.live_bytes_end[0];
}
uint64_t live_count_end(const SiteStats& s) {
    return s.live_count_end[0];
}
uint64_t live_bytes_end_all_kinds(const SiteStats& s) {
    return s.live_bytes_end[0] + s.live_bytes_end[1] + s.live_bytes_end[2];
}
uint64_t live_count_end_all_kinds(const SiteStats& s) {
    return s.live_count_end[0] + s.live_count_end[1] + s.live_count_end[2];
}
uint64_t bytes_at_peak(const SiteStats& s) {
    return s.at_global_peak;
}
uint64_t own_peak_bytes(const SiteStats& s) {
    return s.peak_live_bytes;
}
uint64_t allocations(const SiteStats& s) {
    return s.allocations;
}
uint64_t bytes_allocated(const SiteStats& s) {
    return s.bytes_allocated;
}
double growth_per_iteration(const SiteStats& s) {
    return is_growing(s) ? std::max(0.0, s.growth_bytes_per_iteration) : 0.0;
}
std::string verdict(const SiteStats& s) {
    return verdict_name(s.verdict);
}
bool is_leak(const SiteStats& s) {
    return s.verdict == Verdict::Leak;
}
bool is_growing(const SiteStats& s) {
    return s.verdict == Verdict::Leak || s.verdict == Verdict::Growth;
}
int64_t first_iteration(const SiteStats& s) {
    return s.first_iteration;
}
std::vector<std::string> hints(const SiteStats& s) {
    return s.hints;
}
std::vector<uint64_t> sparkline(const Report& r, const SiteStats& s, size_t points) {
    return live_bytes_by_iteration(s, r.iterations.count, points);
}
std::vector<int> devices(const SiteStats& s) {
    std::vector<int> out;
    for (int d = 0; d < 64; ++d)
        if (s.devices_seen >> d & 1) out.push_back(d);
    return out;
}

uint32_t iteration_count(const Report& r) {
    return r.iterations.count;
}
std::string iteration_source(const Report& r) {
    return r.iterations.source;
}
uint32_t warmup(const Report& r) {
    return r.iterations.warmup;
}
int64_t clock_site(const Report& r) {
    return r.iterations.clock_site;
}

} // namespace gpuleak::analyzer::access
