// One trace in, one report out: definitions (pass 1), loops (one pass over the events), the replay
// with every aggregator (a second pass), verdicts and likely causes. A window (analysis/window.h)
// sits in front of every aggregator; exports that need more than the report ask for their own
// aggregators here (the timeline, the allocation log), so that none re-reads the trace.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/aggregate/allocation_log.h"
#include "analysis/aggregate/timeline.h"
#include "analysis/loops.h"
#include "analysis/report.h"
#include "analysis/window.h"
#include "model/site_table.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

// Everything one trace needs while its report is alive (sites point into the symbolizer's data).
struct Analysis {
    LoadedTrace trace;
    std::unique_ptr<Symbolizer> symbolizer;
    std::unique_ptr<SiteTable> sites;
    Loops loops; // as the window sees them
    Report report;
    bool skipped = false; // not one of the processes asked for (AnalyzeOptions::pids): no report
    std::unique_ptr<Timeline> timeline;         // when AnalyzeOptions::timeline asks
    std::unique_ptr<AllocationLog> allocations; // when AnalyzeOptions::allocation_log asks
};

struct AnalyzeOptions {
    StackMode stacks = StackMode::Merged;
    LoopOptions loops;
    // Off for untrusted input that must not make us open the binaries it names (the fuzzer).
    bool read_modules = true;
    WindowOptions window;       // --from/--to/--device/--min-bytes
    std::vector<uint64_t> pids; // --pid: the traces of other processes are skipped; empty: all
    // Per-event aggregators for the exports: live memory over time (html, perfetto), the
    // allocation history with addresses (torch-snapshot, the records kept).
    std::optional<Timeline::Options> timeline;
    std::optional<size_t> allocation_log;
    // Report::source_lines for every frame of every site (html), not only the headlines.
    bool frame_sources = false;
};

// False with `error` set when the file is not a usable trace (or the window does not fit it).
bool analyze(const std::string& path, const AnalyzeOptions& options, Analysis& a,
             std::string& error);

// The processes of a job in the order the reports show and compare them: each after the processes
// of the job that started it (by pid and parent pid), otherwise in the order given. File names do
// not say it: a shell sorts gpuleak.10004.bin before gpuleak.9998.bin, and pids wrap around.
void order_parents_first(std::vector<std::unique_ptr<Analysis>>& analyses);

} // namespace gpuleak::analyzer
