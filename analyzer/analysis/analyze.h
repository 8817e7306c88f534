// One trace in, one report out: definitions (pass 1), loops (one pass over the events), the replay
// with every aggregator (a second pass), verdicts and likely causes.
#pragma once

#include <memory>
#include <string>

#include "analysis/loops.h"
#include "analysis/report.h"
#include "model/site_table.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

// Everything one trace needs while its report is alive (sites point into the symbolizer's data).
struct Analysis {
    LoadedTrace trace;
    std::unique_ptr<Symbolizer> symbolizer;
    std::unique_ptr<SiteTable> sites;
    Loops loops;
    Report report;
};

struct AnalyzeOptions {
    StackMode stacks = StackMode::Merged;
    LoopOptions loops;
    // Off for untrusted input that must not make us open the binaries it names (the fuzzer).
    bool read_modules = true;
};

// False with `error` set when the file is not a usable trace.
bool analyze(const std::string& path, const AnalyzeOptions& options, Analysis& a,
             std::string& error);

} // namespace gpuleak::analyzer
