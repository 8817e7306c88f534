// gpuleak-report's options beyond the text and JSON report: exports (html, collapsed, pprof,
// perfetto, torch-snapshot), windows into a trace, the baseline comparison and CI outputs. Kept
// out of main.cpp so that main only forwards to them.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/window.h"
#include "compare/baseline.h"
#include "gates/gates.h"
#include "render/exports.h"

namespace gpuleak::analyzer {

struct ExtraOptions {
    std::string metric = "live-end";
    size_t max_entries = 100000;
    size_t top_sites = 12;
    std::string from, to, min_bytes;
    std::vector<uint64_t> pids;
    std::optional<int> device;
    std::vector<std::string> baseline;
    std::string junit, summary;
    bool github = false;
    std::string max_peak_increase = "10%", max_live_end_increase = "10%",
                max_growth_increase = "10%";
    // Parsed by finish_extra_options.
    WindowOptions window;
    StackMetric stack_metric = StackMetric::LiveEnd;
    RegressionThresholds thresholds;
};

// The formats besides text and json.
const std::vector<std::string>& export_formats();
void add_extra_options(CLI::App& app, ExtraOptions& options);
// "" when every option is valid, else the message.
std::string finish_extra_options(ExtraOptions& options);

// What the format and the window ask of the analysis: the per-event aggregators an export reads
// (the timeline, the allocation log), the window and the processes.
void ask_aggregators(const std::string& format, const ExtraOptions& options,
                     AnalyzeOptions& analyze_options);

// Writes an export format; returns the exit status (2 with a message on stderr when it cannot).
int write_export(const std::string& format, const std::vector<ExportInput>& in,
                 const ExtraOptions& options, std::ostream& out);

// Gates, regression gate, JUnit, GitHub annotations and the Markdown summary. Returns false when
// a gate failed (2 is returned through `status` when a file cannot be written).
bool finish_ci(const Gates& gates, bool fail_on_regression, const std::vector<Report>& reports,
               const std::vector<Comparison>& comparisons, const ExtraOptions& options,
               int& status);

} // namespace gpuleak::analyzer
