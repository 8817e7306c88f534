#include "analysis/iterations.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/site_cache.h"
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

} // namespace

Iterations find_iterations(LoadedTrace& trace, SiteTable& sites, const IterationOptions& options) {
    Iterations it;
    it.warmup = options.warmup;
    SiteCache cache(trace, sites);
    std::vector<uint64_t> site_times;
    if (!options.site_location.empty()) {
        std::vector<int8_t> passes; // per site: -1 not checked yet, else whether it passes through
        for_each_event(trace, [&](const Event& e) {
            if (e.record->tag != format::Tag::Alloc) return;
            uint32_t site = cache.site(e.thread, e.record->stack, e.record->py_stack);
            if (site >= passes.size()) passes.resize(site + 1, -1);
            if (passes[site] < 0)
                passes[site] = site_passes_through(sites.site(site), options.site_location);
            if (passes[site]) site_times.push_back(e.record->ts);
        });
    }
    // Allocation counts per site come from pass 1. Visiting the stacks in the order their first
    // allocations have in time makes SiteTable create sites in the order a pass over the events
    // would.
    struct SiteCount {
        uint64_t count = 0;
        uint64_t first_ts = 0;
    };
    std::unordered_map<uint32_t, SiteCount> counts;
    std::vector<const StackAllocations*> stacks;
    for (const StackAllocations& s : trace.alloc_stacks)
        stacks.push_back(&s);
    std::sort(stacks.begin(), stacks.end(),
              [](const StackAllocations* a, const StackAllocations* b) {
                  return std::tie(a->first_ts, a->thread, a->first_ordinal) <
                         std::tie(b->first_ts, b->thread, b->first_ordinal);
              });
    for (const StackAllocations* s : stacks) {
        SiteCount& c = counts[cache.site(s->thread, s->stack, s->py_stack)];
        if (!c.count) c.first_ts = s->first_ts;
        c.count += s->count;
    }
    const std::vector<uint64_t>& marker_times = trace.marker_times;
    it.markers = marker_times.size();
    if (!marker_times.empty() && options.site_location.empty()) {
        it.source = "markers";
        it.boundaries = marker_times;
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
        if (n > best_sites || (n == best_sites && count > best_count))
            best_count = count, best_sites = n;
    uint64_t earliest = ~0ull;
    for (const auto& [site, c] : counts)
        if (c.count == best_count && c.first_ts < earliest)
            earliest = c.first_ts, it.clock_site = site;
    it.has_clock_site = true;
    it.source = "inferred";
    it.boundaries_at_clock_site = true;
    it.boundaries.reserve(best_count); // one per allocation of the clock site
    return it;
}

} // namespace gpuleak::analyzer
