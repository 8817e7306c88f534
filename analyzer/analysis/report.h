// Everything a renderer needs, computed once by the replay. Renderers only format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/site_table.h"

namespace gpuleak::analyzer {

struct IterationSample {
    uint32_t iteration;
    uint64_t bytes; // live at the end of the iteration (all memory kinds)
    uint64_t count;
};

enum class Verdict { None, Transient, Retained, Growth, Leak };
const char* verdict_name(Verdict v);

struct SiteStats {
    uint32_t site = 0;
    uint64_t allocations = 0;
    uint64_t bytes_allocated = 0;
    uint64_t frees = 0;
    // Live figures per memory class, at the end: device (device, array and graph memory), managed,
    // pinned host (also host-registered), imported (IPC, pool import, external memory: another
    // process's memory, counted apart and never in a sum, series, peak or verdict).
    uint64_t live_count_end[4] = {0, 0, 0, 0};
    uint64_t live_bytes_end[4] = {0, 0, 0, 0};
    uint64_t peak_live_bytes = 0; // the site's own maximum of live bytes (all kinds)
    uint64_t at_global_peak = 0;  // live device bytes when the process's device peak was reached
    uint64_t largest = 0;
    int kinds_seen = 0;        // bit per MemKind
    uint64_t apis_seen = 0;    // bit per format::Api
    uint64_t devices_seen = 0; // bit per device ordinal (< 64)

    // Iterations (analysis/iterations.h).
    int64_t first_iteration = -1;
    uint64_t outlived = 0; // allocations still live after the iteration that made them ended
    // Sparse: a sample at the end of an iteration in which the site changed, unless it ended where
    // the previous sample (or 0) left it. Values hold until the next sample.
    std::vector<IterationSample> series;
    bool changed = false; // since the last sample
    Verdict verdict = Verdict::None;
    double growth_bytes_per_iteration = 0;
    double confidence = 0; // R^2 of the fit behind a leak or growth verdict
    std::vector<std::string> hints;
};

struct SiteBytes {
    uint32_t site;
    uint64_t bytes;
};

struct OomEvent {
    double time_s = 0;
    uint64_t requested = 0;
    std::string api;
    int device = -1;
    int error = 0;
    uint32_t site = 0;
    uint64_t live_bytes = 0;                  // device bytes live at that moment
    uint64_t free_bytes = 0, total_bytes = 0; // 0 = unknown
    std::vector<SiteBytes> by_site;           // largest first
    std::vector<std::string> hints;
};

struct LargestAllocation {
    uint64_t bytes;
    uint32_t site;
    std::string api;
    std::string kind;
    double time_s;
};

struct Summary {
    uint64_t pid = 0;
    std::string command;
    double duration_s = 0;
    uint64_t events = 0, allocations = 0, frees = 0, failed_allocations = 0;
    uint64_t unknown_frees = 0, failed_frees = 0;
    uint64_t peak_bytes = 0;
    double peak_time_s = 0;
    uint64_t live_bytes_end = 0, live_count_end = 0; // device
    uint64_t managed_live_bytes_end = 0, pinned_live_bytes_end = 0;
    uint64_t managed_live_count_end = 0, pinned_live_count_end = 0;
    uint64_t imported_live_bytes_end = 0, imported_live_count_end = 0;
    bool clean_end = false;
    uint64_t median_allocation_bytes = 0; // of successful allocations (a sample of up to 1 M)
};

struct IterationSummary {
    std::string source = "none";
    uint32_t count = 0;
    uint64_t markers = 0;
    uint32_t warmup = 0;
    int64_t clock_site = -1;
};

struct Report {
    std::string trace_path;
    IterationSummary iterations;
    Summary summary;
    std::vector<SiteStats> sites; // indexed by site id
    std::vector<SiteBytes> peak_by_site;
    std::vector<OomEvent> ooms;
    std::vector<LargestAllocation> largest;
    std::vector<std::string> warnings;
    std::vector<std::string> notes; // facts worth a line (allocator mode, threads without Python)
    std::vector<std::string> hints; // process-wide likely causes
    const SiteTable* site_table = nullptr;
};

} // namespace gpuleak::analyzer
