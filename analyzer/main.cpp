// gpuleak-report: reads traces written by libgpuleak.so and reports where device memory is held,
// which sites keep memory from one iteration to the next, and why allocations failed.
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "analysis/analyze.h"
#include "analysis/hints.h"
#include "gates/gates.h"
#include "outputs.h"
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
    "  2  a trace could not be read, or bad arguments (the message names the file)\n\n"
    "Environment:\n"
    "  GPULEAK_REPORT_THREADS=1  read the trace on one core (default: a second one when there "
    "is one)\n";

} // namespace

int main(int argc, char** argv) {
    // Offline and private: elfutils would otherwise ask debuginfod servers about every module.
    unsetenv("DEBUGINFOD_URLS");
    CLI::App app{kDescription};
    std::vector<std::string> traces;
    std::string format = "text", stacks = "merged", output, max_growth, max_peak, max_live_end;
    std::vector<std::string> fail_on;
    ExtraOptions extra;
    RenderOptions options;
    AnalyzeOptions analyze_options;
    LoopOptions& loop_options = analyze_options.loops;
    app.add_option("traces", traces,
                   "trace files written by libgpuleak.so (several: one job's processes)")
        ->required(); // a missing file is refused by the reader, in one line naming it
    std::vector<std::string> formats = {"text", "json"};
    formats.insert(formats.end(), export_formats().begin(), export_formats().end());
    app.add_option("--format", format,
                   "text, json, html, collapsed, pprof, perfetto or torch-snapshot")
        ->check(CLI::IsMember(formats));
    app.add_option("--stacks", stacks, "merged (Python and native), python or native")
        ->check(CLI::IsMember({"merged", "python", "native"}));
    // Repeatable options take one value per occurrence, so that the traces after them stay traces.
    app.add_option("--iteration-site", loop_options.site_locations,
                   "FILE:LINE whose every allocation starts an iteration of a loop (repeatable; "
                   "default: markers, else loops found in the stacks)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--warmup", loop_options.warmup,
                   "iterations of each loop to ignore at its start (autotuning, lazy init)");
    app.add_option("--fail-on", fail_on,
                   "exit 1 if any site has this verdict: leak, accumulation or growth, or if this "
                   "run regressed against --baseline (regression); comma-separated or repeated "
                   "for several")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check([](const std::string& v) {
            bool regression = false;
            return parse_fail_on(v, &regression)
                       ? std::string()
                       : "expected leak, accumulation, growth or regression";
        });
    app.add_option("--max-growth", max_growth,
                   "exit 1 if a site grows faster than SIZE/iter (e.g. 1MiB/iter)");
    app.add_option("--max-peak", max_peak, "exit 1 if the device peak exceeds SIZE (e.g. 20GiB)");
    app.add_option("--max-live-end", max_live_end, "exit 1 if more than SIZE is live at the end");
    app.add_option("--top", options.top, "sites shown per section (text)");
    app.add_option("--frames", options.max_frames, "frames shown per site (text)");
    app.add_option("-o,--output", output, "write the report to this file instead of stdout");
    add_extra_options(app, extra);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (std::string error = finish_extra_options(extra); !error.empty()) {
        std::cerr << "gpuleak-report: " << error << "\n";
        return 2;
    }
    Gates gates;
    bool fail_on_regression = false;
    for (const std::string& v : fail_on) {
        std::vector<Verdict> verdicts = parse_fail_on(v, &fail_on_regression).value();
        for (Verdict verdict : verdicts)
            if (std::find(gates.fail_on.begin(), gates.fail_on.end(), verdict) ==
                gates.fail_on.end())
                gates.fail_on.push_back(verdict);
    }
    if (fail_on_regression && extra.baseline.empty()) {
        std::cerr << "gpuleak-report: --fail-on regression needs --baseline TRACE\n";
        return 2;
    }
    if (!extra.baseline.empty() && format != "text" && format != "json") {
        std::cerr << "gpuleak-report: with --baseline, --format is text or json\n";
        return 2;
    }
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
    analyze_options.stacks = stacks == "python"   ? StackMode::Python
                             : stacks == "native" ? StackMode::Native
                                                  : StackMode::Merged;
    ask_aggregators(format, extra, analyze_options);

    int status = 0;
    auto analyze_all = [&](const std::vector<std::string>& paths, const AnalyzeOptions& o,
                           std::vector<std::unique_ptr<Analysis>>& analyses,
                           std::vector<Report>& reports) {
        for (const auto& path : paths) {
            auto a = std::make_unique<Analysis>();
            std::string error;
            if (!analyze(path, o, *a, error)) {
                std::cerr << "gpuleak-report: " << path << ": " << error << "\n";
                status = 2;
            } else if (!a->skipped) {
                analyses.push_back(std::move(a));
            }
        }
        order_parents_first(analyses);
        for (auto& a : analyses)
            reports.push_back(std::move(a->report));
        if (reports.size() > 1) add_multi_process_hints(reports);
    };
    std::vector<std::unique_ptr<Analysis>> analyses, base_analyses;
    std::vector<Report> reports, base_reports;
    analyze_all(traces, analyze_options, analyses, reports);
    if (status == 0 && reports.empty() && !extra.pids.empty()) {
        std::cerr << "gpuleak-report: no trace of the processes given with --pid\n";
        return 2;
    }
    std::vector<Comparison> comparisons;
    if (!extra.baseline.empty()) {
        // Another run: other pids.
        AnalyzeOptions base_options = analyze_options;
        base_options.pids.clear();
        analyze_all(extra.baseline, base_options, base_analyses, base_reports);
        if (status == 0 && base_reports.size() != reports.size()) {
            std::cerr << "gpuleak-report: --baseline has " << base_reports.size()
                      << " processes, the traces " << reports.size()
                      << "; they are compared in order and must be as many\n";
            return 2;
        }
        for (size_t i = 0; i < reports.size() && i < base_reports.size(); ++i)
            comparisons.push_back(compare_reports(base_reports[i], reports[i]));
    }

    std::ofstream file;
    if (!output.empty()) {
        file.open(output, std::ios::binary);
        if (!file) {
            std::cerr << "gpuleak-report: cannot write " << output << "\n";
            return 2;
        }
    }
    std::ostream& out = output.empty() ? std::cout : file;
    if (!comparisons.empty()) {
        if (format == "json")
            out << comparison_json(comparisons)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
        else
            render_comparison_text(comparisons, options.top, out);
    } else if (!reports.empty() && format != "text" && format != "json") {
        std::vector<ExportInput> in;
        for (size_t i = 0; i < reports.size(); ++i)
            in.push_back(
                {&reports[i], analyses[i]->timeline.get(), analyses[i]->allocations.get()});
        if (int rc = write_export(format, in, extra, out)) {
            if (!output.empty()) {
                file.close();
                std::remove(output.c_str()); // nothing half-written is left behind
            }
            return rc;
        }
    } else if (!reports.empty()) {
        if (format == "json") {
            render_json(reports, out);
        } else {
            for (const Report& r : reports)
                render_text(r, options, out);
            if (reports.size() > 1) render_text_merged(reports, out);
        }
    }
    bool ci = gates.any() || fail_on_regression || !extra.junit.empty() || !extra.summary.empty() ||
              extra.github;
    if (status == 0 && ci &&
        !finish_ci(gates, fail_on_regression, reports, comparisons, extra, status) && status == 0)
        status = 1;
    return status;
}
