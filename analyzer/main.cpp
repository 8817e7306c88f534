// gpuleak-report: reads traces written by libgpuleak.so and reports where device memory is held,
// which sites keep memory from one iteration to the next, and why allocations failed.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "analysis/hints.h"
#include "analysis/iterations.h"
#include "analysis/replay.h"
#include "analysis/verdicts.h"
#include "gates/gates.h"
#include "render/renderers.h"
#include "trace/loaded_trace.h"

using namespace gpuleak::analyzer;

namespace {

constexpr const char* kDescription =
    "gpuleak-report: where a traced program holds GPU memory, by call site, and what keeps "
    "growing.\n\n"
    "Exit status:\n"
    "  0  report written (and every gate passed)\n"
    "  1  a gate failed (--fail-on, --max-growth, --max-peak, --max-live-end); one line per gate "
    "on stderr\n"
    "  2  a trace could not be read, or bad arguments (the message names the file)\n";

// Everything one trace needs while its report is alive (sites point into the symbolizer's data).
struct Analysis {
    LoadedTrace trace;
    std::unique_ptr<Symbolizer> symbolizer;
    std::unique_ptr<SiteTable> sites;
    Report report;
};

bool analyze(const std::string& path, StackMode mode, const IterationOptions& iteration_options,
             Analysis& a) {
    std::string error;
    if (!load_trace(path, a.trace, error)) {
        std::cerr << "gpuleak-report: " << path << ": " << error << "\n";
        return false;
    }
    a.symbolizer = std::make_unique<Symbolizer>();
    for (const auto& m : a.trace.modules)
        a.symbolizer->add_module(m);
    a.sites = std::make_unique<SiteTable>(a.trace, *a.symbolizer, mode);
    Iterations iterations = find_iterations(a.trace, *a.sites, iteration_options);
    a.report = replay(a.trace, *a.sites, iterations);
    decide_verdicts(a.report, iterations);
    add_hints(a.report, a.trace, iterations);
    for (const auto& w : a.symbolizer->warnings()) {
        // System libraries rarely ship debug info, and their frames are not where users fix leaks.
        bool system = w.find("no debug info for /lib/") != std::string::npos ||
                      w.find("no debug info for /usr/lib/") != std::string::npos;
        if (!system) a.report.warnings.push_back(w);
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    // Offline and private: elfutils would otherwise ask debuginfod servers about every module.
    unsetenv("DEBUGINFOD_URLS");
    CLI::App app{kDescription};
    std::vector<std::string> traces;
    std::string format = "text", stacks = "merged", output, fail_on, max_growth, max_peak,
                max_live_end;
    RenderOptions options;
    IterationOptions iteration_options;
    app.add_option("traces", traces,
                   "trace files written by libgpuleak.so (several: one job's processes)")
        ->required(); // a missing file is refused by the reader, in one line naming it
    app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
    app.add_option("--stacks", stacks, "merged (Python and native), python or native")
        ->check(CLI::IsMember({"merged", "python", "native"}));
    app.add_option(
        "--iteration-site", iteration_options.site_location,
        "FILE:LINE whose every allocation starts an iteration (default: markers, else inferred)");
    app.add_option("--warmup", iteration_options.warmup,
                   "iterations to ignore at the start (autotuning, lazy init)");
    app.add_option("--fail-on", fail_on, "exit 1 if any site has this verdict")
        ->check(CLI::IsMember({"leak"}));
    app.add_option("--max-growth", max_growth,
                   "exit 1 if a site grows faster than SIZE/iter (e.g. 1MiB/iter)");
    app.add_option("--max-peak", max_peak, "exit 1 if the device peak exceeds SIZE (e.g. 20GiB)");
    app.add_option("--max-live-end", max_live_end, "exit 1 if more than SIZE is live at the end");
    app.add_option("--top", options.top, "sites shown per section (text)");
    app.add_option("--frames", options.max_frames, "frames shown per site (text)");
    app.add_option("-o,--output", output, "write the report to this file instead of stdout");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    Gates gates;
    gates.fail_on_leak = fail_on == "leak";
    for (auto [text, target, flag] :
         {std::tuple{&max_growth, &gates.max_growth_per_iteration, "--max-growth"},
          std::tuple{&max_peak, &gates.max_peak, "--max-peak"},
          std::tuple{&max_live_end, &gates.max_live_end, "--max-live-end"}}) {
        if (text->empty()) continue;
        *target = parse_size(*text);
        if (!*target) {
            std::cerr << "gpuleak-report: " << flag << " " << *text
                      << ": not a size (try 512MiB, 2GiB, 1M/iter)\n";
            return 2;
        }
    }
    StackMode mode = stacks == "python"   ? StackMode::Python
                     : stacks == "native" ? StackMode::Native
                                          : StackMode::Merged;

    std::vector<std::unique_ptr<Analysis>> analyses;
    int status = 0;
    for (const auto& path : traces) {
        auto a = std::make_unique<Analysis>();
        if (analyze(path, mode, iteration_options, *a))
            analyses.push_back(std::move(a));
        else
            status = 2;
    }
    std::vector<Report> reports;
    for (auto& a : analyses)
        reports.push_back(std::move(a->report));
    if (reports.size() > 1) add_multi_process_hints(reports);

    std::ofstream file;
    if (!output.empty()) {
        file.open(output);
        if (!file) {
            std::cerr << "gpuleak-report: cannot write " << output << "\n";
            return 2;
        }
    }
    std::ostream& out = output.empty() ? std::cout : file;
    if (!reports.empty()) {
        if (format == "json") {
            render_json(reports, out);
        } else {
            for (const Report& r : reports)
                render_text(r, options, out);
            if (reports.size() > 1) render_text_merged(reports, out);
        }
    }
    if (status == 0 && gates.any() && !check_gates(gates, reports, std::cerr)) status = 1;
    return status;
}
