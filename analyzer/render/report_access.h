// The one place where the exporters (HTML, pprof, Perfetto, collapsed stacks, PyTorch snapshot,
// baseline comparison, CI outputs) read a Report and its SiteTable. When the Report changes, these
// functions change; the exporters do not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/lifetimes.h"
#include "analysis/report.h"
#include "analysis/timeline.h"

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
std::string label(const Report& r, uint32_t id); // "function at file.cpp:42"

// Sites with allocations, leaks first, then growth, then by live bytes at the end (as the JSON).
std::vector<const SiteStats*> ranked_sites(const Report& r);
// The `n` sites that held the most device memory at any time (their own peak), largest first.
std::vector<uint32_t> top_sites_by_peak(const Report& r, size_t n);

// Device memory unless said otherwise.
uint64_t live_bytes_end(const SiteStats& s);
uint64_t live_count_end(const SiteStats& s);
uint64_t live_bytes_end_all_kinds(const SiteStats& s);
uint64_t live_count_end_all_kinds(const SiteStats& s);
uint64_t bytes_at_peak(const SiteStats& s);
uint64_t own_peak_bytes(const SiteStats& s);
uint64_t allocations(const SiteStats& s);
uint64_t bytes_allocated(const SiteStats& s);
double growth_per_iteration(const SiteStats& s); // bytes, 0 unless leak or growth
std::string verdict(const SiteStats& s);         // "leak" | "growth" | "retained" | ...
bool is_leak(const SiteStats& s);
bool is_growing(const SiteStats& s); // leak or growth
int64_t first_iteration(const SiteStats& s);
std::vector<std::string> hints(const SiteStats& s);
std::vector<uint64_t> sparkline(const Report& r, const SiteStats& s, size_t points);
std::vector<int> devices(const SiteStats& s);

uint32_t iteration_count(const Report& r);
std::string iteration_source(const Report& r);
uint32_t warmup(const Report& r);
int64_t clock_site(const Report& r);

} // namespace access
} // namespace gpuleak::analyzer
