#include "analysis/analyze.h"

#include "analysis/aggregate/device_peak.h"
#include "analysis/aggregate/failed_allocations.h"
#include "analysis/aggregate/largest.h"
#include "analysis/aggregate/loop_lifetimes.h"
#include "analysis/aggregate/totals.h"
#include "analysis/hints.h"
#include "analysis/replay.h"
#include "analysis/site_names.h"

namespace gpuleak::analyzer {

bool analyze(const std::string& path, const AnalyzeOptions& options, Analysis& a,
             std::string& error) {
    if (!load_trace(path, a.trace, error)) return false;
    a.symbolizer = std::make_unique<Symbolizer>();
    if (options.read_modules)
        for (const auto& m : a.trace.modules)
            a.symbolizer->add_module(m);
    a.sites = std::make_unique<SiteTable>(a.trace, *a.symbolizer, options.stacks);
    a.loops = find_loops(a.trace, *a.sites, options.loops);

    Report& r = a.report;
    r.trace_path = a.trace.path;
    r.site_table = a.sites.get();
    r.summary.pid = a.trace.process.pid;
    r.summary.command = a.trace.process.command();
    r.summary.clean_end = a.trace.clean_end;
    Totals totals;
    DevicePeak peak;
    FailedAllocations failed;
    Largest largest;
    LoopLifetimes lifetimes(a.loops);
    replay(a.trace, *a.sites, {&totals, &peak, &failed, &largest, &lifetimes}, r);

    r.loops = summarize_loops(a.loops, a.sites->calls());
    int64_t main_loop = a.loops.main_loop();
    r.iterations.markers = a.loops.markers;
    r.iterations.warmup = a.loops.warmup;
    if (main_loop >= 0) {
        r.iterations.source = a.loops.loops[main_loop].source;
        r.iterations.count = a.loops.loops[main_loop].iterations();
    }
    name_sites(r);
    add_hints(r, a.trace, a.loops);
    r.warnings = a.trace.warnings;
    if (!a.trace.clean_end)
        r.warnings.push_back("the trace has no end record: the process was killed or crashed; "
                             "events of its last ~100 ms may be missing");
    for (const auto& w : a.symbolizer->warnings()) {
        // System libraries rarely ship debug info, and their frames are not where users fix leaks.
        bool system = w.find("no debug info for /lib/") != std::string::npos ||
                      w.find("no debug info for /usr/lib/") != std::string::npos;
        if (!system) r.warnings.push_back(w);
    }
    return true;
}

} // namespace gpuleak::analyzer
