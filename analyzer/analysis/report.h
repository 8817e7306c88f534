// Everything a renderer needs, filled in by the aggregators of one replay (analysis/aggregate/) and
// the verdicts. Renderers only format.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/sample_series.h"
#include "gpuleak/format/records.h"
#include "model/site_table.h"

namespace gpuleak::analyzer {

// The classes live memory is counted in: device (device, array and graph memory), managed, pinned
// host (also host-registered), imported (IPC, pool import, external memory: another process's
// memory, counted apart and never in a sum, series, peak or verdict).
inline constexpr int kLiveClasses = 4;
inline int live_class(format::MemKind kind) {
    switch (kind) {
    case format::MemKind::Managed:
        return 1;
    case format::MemKind::PinnedHost:
    case format::MemKind::HostRegistered:
        return 2;
    case format::MemKind::Imported:
        return 3;
    default:
        return 0;
    }
}

// Ordered by severity.
enum class Verdict { None, Transient, Retained, Growth, Accumulation, Leak };
const char* verdict_name(Verdict v);

// Why what a loop kept to the end is retained, not a leak (analysis/verdicts.h).
enum class RetainedBecause {
    None,
    HeldThroughLaterLoop, // built by a loop, then held unchanged through a later loop
    BuiltInOneCall,       // built by a library's loop inside one call of a line in no loop
    CacheWarmUp,          // segments a caching allocator grew early in a run, then no more
};

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

    // Its loop (analysis/loops.h) and verdict (analysis/verdicts.h), from the thread whose
    // verdict is the most severe where it allocated in several.
    int64_t loop = -1;    // index into Report::loops; -1: allocated outside every loop
    uint32_t threads = 0; // threads in which it allocated inside a loop
    int64_t first_iteration = -1;
    uint64_t outlived = 0; // allocations still live after the iteration that made them ended
    // Sparse: live memory at the end of the iterations of its loop in which it changed. Values
    // hold until the next sample.
    SampleSeries series;
    Verdict verdict = Verdict::None;
    double growth_bytes_per_iteration = 0;
    double confidence = 0;          // R^2 of the fit behind a leak, accumulation or growth verdict
    uint64_t accumulated_bytes = 0; // accumulation: the most it held before releasing it
    // Why a leak of its loop was judged retained instead (analysis/verdicts.h), and for
    // HeldThroughLaterLoop the later loop (index into Report::loops); -1 otherwise.
    RetainedBecause retained_because = RetainedBecause::None;
    int64_t held_through = -1;
    // Live when the program's last allocation came (what its exit then frees is still held).
    uint64_t live_at_teardown = 0, live_bytes_at_teardown = 0;
    std::vector<std::string> hints;
};

// How a report names a site: its headline, with the callers that tell it apart from other sites of
// the same headline, and the headline's source line when the file is readable.
struct SiteName {
    std::string label;  // "T.__init__ at tensor.py:68 ← forward_step:24 ← train_leaky:32"
    std::string source; // "" when unknown
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

// The iterations of the program's main loop (the one holding most allocations), for readers of
// the first schema.
struct IterationSummary {
    std::string source = "none";
    int64_t loop = -1; // index into Report::loops; -1: no loop
    uint32_t count = 0;
    uint64_t markers = 0;
    uint32_t warmup = 0;
};

struct LoopSummary {
    uint32_t id = 0;
    std::string source; // inferred | markers | site | threads
    std::string name;   // marker name or --iteration-site location
    int64_t thread = -1;
    std::string function, file; // the head: where each iteration's first allocation is made from
    bool python = false;        // the head is a Python frame
    int line = 0;
    int loop_line = 0; // the for/while statement, when the source shows it
    uint32_t iterations = 0;
    // Every allocation in it a block of one of PyTorch's caching allocators (Loop's): its
    // iterations are those that grew the cache, the others do not show.
    bool seen_through_cache = false;
    double start_s = 0, end_s = 0;
    uint64_t allocations = 0;
    bool library_thread = false; // Loop's
    uint32_t sites = 0;          // (site, thread) pairs judged in it
};

struct Report {
    std::string trace_path;
    IterationSummary iterations;
    std::vector<LoopSummary> loops;
    Summary summary;
    std::vector<SiteStats> sites; // indexed by site id
    std::vector<SiteName> names;  // indexed by site id
    std::vector<SiteBytes> peak_by_site;
    std::vector<OomEvent> ooms;
    std::vector<LargestAllocation> largest;
    std::vector<std::string> warnings;
    std::vector<std::string> notes; // facts worth a line (allocator mode, threads without Python)
    std::vector<std::string> hints; // process-wide likely causes
    // The source text of frames' lines by (file, line), beyond the headlines' (SiteName::source):
    // for renderers that show whole stacks with their code (html). Filled only when asked
    // (AnalyzeOptions::frame_sources); lines that could not be read are absent.
    std::map<std::pair<std::string, int>, std::string> source_lines;
    const SiteTable* site_table = nullptr;
};

} // namespace gpuleak::analyzer
