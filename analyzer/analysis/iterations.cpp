#include "analysis/iterations.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "trace/event_stream.h"

namespace gpuleak::analyzer {
namespace {

bool site_passes_through(const Site& site, const std::string& location) {
    size_t colon = location.rfind(':');
    if (colon == std::string::npos) return false;
    std::string file = location.substr(0, colon);
    int line = std::atoi(location.c_str() + colon + 1);
    for (const Frame& f : site.frames) {
        if (f.line != line || f.file.size() < file.size()) continue;
        // "eval.py:42" matches /home/u/proj/eval.py; a path given by the user must match its tail.
        if (f.file.compare(f.file.size() - file.size(), file.size(), file) == 0 &&
            (f.file.size() == file.size() || f.file[f.file.size() - file.size() - 1] == '/'))
            return true;
    }
    return false;
}

uint32_t alloc_site(LoadedTrace& trace, SiteTable& sites, const Event& e) {
    return sites.site_for(trace.native_node(e.thread, e.record->stack), trace.py_node(e.thread, e.record->py_stack));
}

} // namespace

Iterations find_iterations(LoadedTrace& trace, SiteTable& sites, const IterationOptions& options) {
    Iterations it;
    it.warmup = options.warmup;
    struct SiteCount {
        uint64_t count = 0;
        uint64_t first_ts = 0;
    };
    std::unordered_map<uint32_t, SiteCount> counts;
    std::vector<uint64_t> marker_times, site_times;
    for_each_event(trace, [&](const Event& e) {
        if (e.record->tag == format::Tag::Marker) {
            marker_times.push_back(e.record->ts);
            return;
        }
        if (e.record->tag != format::Tag::Alloc) return;
        uint32_t site = alloc_site(trace, sites, e);
        auto& c = counts[site];
        if (!c.count++) c.first_ts = e.record->ts;
        if (!options.site_location.empty() && site_passes_through(sites.site(site), options.site_location))
            site_times.push_back(e.record->ts);
    });
    it.markers = marker_times.size();
    if (!marker_times.empty() && options.site_location.empty()) {
        it.source = "markers";
        it.boundaries = std::move(marker_times);
        return it;
    }
    if (!options.site_location.empty()) {
        it.source = "site";
        it.boundaries = std::move(site_times);
        return it;
    }
    std::map<uint64_t, uint64_t> sites_per_count;
    for (const auto& [site, c] : counts)
        if (c.count >= 4) ++sites_per_count[c.count];
    if (sites_per_count.empty()) return it;
    uint64_t best_count = 0, best_sites = 0;
    for (const auto& [count, n] : sites_per_count)
        if (n > best_sites || (n == best_sites && count > best_count)) best_count = count, best_sites = n;
    uint64_t earliest = ~0ull;
    for (const auto& [site, c] : counts)
        if (c.count == best_count && c.first_ts < earliest) earliest = c.first_ts, it.clock_site = site;
    it.has_clock_site = true;
    it.source = "inferred";
    for_each_event(trace, [&](const Event& e) {
        if (e.record->tag == format::Tag::Alloc && alloc_site(trace, sites, e) == it.clock_site)
            it.boundaries.push_back(e.record->ts);
    });
    return it;
}

} // namespace gpuleak::analyzer
