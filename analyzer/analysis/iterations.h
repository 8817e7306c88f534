// Where the traced program's loop iterations begin. Users rarely mark them, so they are found in
// this order:
//   1. markers in the trace (gpuleak_mark_iteration, or an NVTX range through the NVTX injection);
//   2. --iteration-site FILE:LINE: every allocation from a site passing through that line starts
//   one;
//   3. inference: the site that allocates "once per iteration". Among sites allocating at least
//      four times, the allocation count shared by the most sites is taken as the iteration count (a
//      loop's body usually has several such sites, while sites allocating several times per
//      iteration, or every few iterations, have counts of their own); ties go to the larger count.
//      The earliest site with that count is the clock: each of its allocations starts an iteration.
// Iteration 0 is everything before the first boundary (setup: loading weights, warm-up).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/site_table.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

struct IterationOptions {
    std::string site_location; // "file.py:42" from --iteration-site, or ""
    uint32_t warmup = 0;       // iterations ignored by the verdicts
};

struct Iterations {
    std::string source = "none";      // markers | site | inferred | none
    std::vector<uint64_t> boundaries; // timestamps (ns), ascending
    // Inferred: the boundaries are the clock site's allocations, which the replay collects as it
    // meets them (saving a pass over the trace); until then `boundaries` is empty.
    bool boundaries_at_clock_site = false;
    uint32_t clock_site = 0;
    bool has_clock_site = false;
    uint64_t markers = 0;
    uint32_t warmup = 0;
    uint32_t count() const { return static_cast<uint32_t>(boundaries.size()); }
};

Iterations find_iterations(LoadedTrace& trace, SiteTable& sites, const IterationOptions& options);

} // namespace gpuleak::analyzer
