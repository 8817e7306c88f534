// The one place where the exporters (HTML, pprof, Perfetto, collapsed stacks, PyTorch snapshot,
// baseline comparison, CI outputs) read a Report and its SiteTable. When the Report changes, these
// functions change; the exporters do not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/aggregate/allocation_log.h"
#include "analysis/aggregate/timeline.h"
#include "analysis/report.h"

namespace gpuleak::analyzer {

// What an exporter gets for one process: the report, and the per-event aggregators it asked for.
struct ExportInput {
    const Report* report = nullptr;
    const Timeline* timeline = nullptr;
    const AllocationLog* allocations = nullptr;
};

namespace access {

uint64_t pid(const Report& r);
const std::string& command(const Report& r);
const std::vector<SiteStats>& sites(const Report& r);
const Site& site(const Report& r, uint32_t id);
const std::vector<Frame>& frames(const Report& r, uint32_t id); // innermost first
const Frame* headline(const Report& r, uint32_t id);
// The site's name (Report::names): its headline, with the callers that tell it apart from sites
// of the same headline: "forward at model.py:42 ← train:30".
const std::string& label(const Report& r, uint32_t id);
const std::string& source(const Report& r, uint32_t id); // the headline's source line, or ""
// The source line of any frame of a site, where the analysis read it (frame_sources), or "".
const std::string& frame_source(const Report& r, const Frame& f);

// Sites with allocations, leaks first, then accumulation, then growth, then by live bytes at the
// end (as the JSON).
std::vector<const SiteStats*> ranked_sites(const Report& r);
// The `n` sites that held the most device memory at any time (their own peak), largest first.
std::vector<uint32_t> top_sites_by_peak(const Report& r, size_t n);

// Device memory (the device class: device, array and graph memory) unless said otherwise.
uint64_t live_bytes_end(const SiteStats& s);
uint64_t live_count_end(const SiteStats& s);
uint64_t live_bytes_end_all_kinds(const SiteStats& s); // device, managed and pinned
uint64_t live_count_end_all_kinds(const SiteStats& s);
uint64_t bytes_at_peak(const SiteStats& s);
uint64_t own_peak_bytes(const SiteStats& s);
uint64_t allocations(const SiteStats& s);
uint64_t bytes_allocated(const SiteStats& s);
bool device_memory(const SiteStats& s);          // allocated memory of the device class
double growth_per_iteration(const SiteStats& s); // bytes, 0 unless leak, accumulation or growth
std::string verdict(const SiteStats& s);         // "leak" | "accumulation" | "growth" | ...
bool is_leak(const SiteStats& s);
bool is_growing(const SiteStats& s);         // leak, accumulation or growth
int64_t first_iteration(const SiteStats& s); // in its own loop
std::vector<std::string> hints(const SiteStats& s);
// Live bytes at the end of each iteration of the site's own loop, at most `points` values.
std::vector<uint64_t> sparkline(const Report& r, const SiteStats& s, size_t points);
std::vector<int> devices(const SiteStats& s);

// Loops (analysis/loops.h): each site is judged in its own.
const std::vector<LoopSummary>& loops(const Report& r);
int64_t loop_of(const SiteStats& s); // index into loops(); -1: outside every loop
int64_t main_loop(const Report& r);  // the loop `iteration_count` counts; -1: none
// "the loop at train.py:30 (in train)", "the iterations marked \"step\"".
std::string loop_place(const LoopSummary& l);
// loop_place with its iterations: "the loop at train.py:30 (in train), 30 iterations".
std::string loop_description(const Report& r, const LoopSummary& l);

// The main loop's iterations (the report's first schema).
uint32_t iteration_count(const Report& r);
std::string iteration_source(const Report& r);
uint32_t warmup(const Report& r);

} // namespace access
} // namespace gpuleak::analyzer
