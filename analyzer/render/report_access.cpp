#include "render/report_access.h"

#include <algorithm>

#include "analysis/verdicts.h"
#include "render/renderers.h"

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
const std::string& label(const Report& r, uint32_t id) {
    static const std::string unknown = "unknown site";
    return id < r.names.size() ? r.names[id].label : unknown;
}
const std::string& source(const Report& r, uint32_t id) {
    static const std::string none;
    return id < r.names.size() ? r.names[id].source : none;
}
const std::string& frame_source(const Report& r, const Frame& f) {
    static const std::string none;
    auto it = r.source_lines.find({f.file, f.line});
    return it == r.source_lines.end() ? none : it->second;
}

namespace {

int severity_rank(const SiteStats& s) {
    switch (s.verdict) {
    case Verdict::Leak:
        return 0;
    case Verdict::Accumulation:
        return 1;
    case Verdict::Growth:
        return 2;
    default:
        return 3;
    }
}

} // namespace

std::vector<const SiteStats*> ranked_sites(const Report& r) {
    std::vector<const SiteStats*> out;
    for (const SiteStats& s : r.sites)
        if (s.allocations) out.push_back(&s);
    std::stable_sort(out.begin(), out.end(), [&](const SiteStats* a, const SiteStats* b) {
        if (severity_rank(*a) != severity_rank(*b)) return severity_rank(*a) < severity_rank(*b);
        if (live_bytes_end(*a) != live_bytes_end(*b))
            return live_bytes_end(*a) > live_bytes_end(*b);
        return a->peak_live_bytes > b->peak_live_bytes;
    });
    return out;
}

std::vector<uint32_t> top_sites_by_peak(const Report& r, size_t n) {
    std::vector<const SiteStats*> all;
    for (const SiteStats& s : r.sites)
        if (s.peak_live_bytes && device_memory(s)) all.push_back(&s);
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
bool device_memory(const SiteStats& s) {
    for (int k = 0; k < format::kMemKindCount; ++k)
        if ((s.kinds_seen >> k & 1) && live_class(static_cast<format::MemKind>(k)) == 0)
            return true;
    return false;
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
    return s.verdict == Verdict::Leak || s.verdict == Verdict::Accumulation ||
           s.verdict == Verdict::Growth;
}
int64_t first_iteration(const SiteStats& s) {
    return s.first_iteration;
}
std::vector<std::string> hints(const SiteStats& s) {
    return s.hints;
}
std::vector<uint64_t> sparkline(const Report& r, const SiteStats& s, size_t points) {
    uint32_t iterations = s.loop >= 0 ? r.loops[s.loop].iterations : 0;
    return live_bytes_by_iteration(s, iterations, points);
}
std::vector<int> devices(const SiteStats& s) {
    std::vector<int> out;
    for (int d = 0; d < 64; ++d)
        if (s.devices_seen >> d & 1) out.push_back(d);
    return out;
}

const std::vector<LoopSummary>& loops(const Report& r) {
    return r.loops;
}
int64_t loop_of(const SiteStats& s) {
    return s.loop;
}
int64_t main_loop(const Report& r) {
    return r.iterations.loop;
}
std::string loop_place(const LoopSummary& l) {
    return analyzer::loop_place(l);
}
std::string loop_description(const Report& r, const LoopSummary& l) {
    return loop_line(r, l);
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

} // namespace gpuleak::analyzer::access
