#include "outputs.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "ci/ci_outputs.h"

namespace gpuleak::analyzer {

const std::vector<std::string>& export_formats() {
    static const std::vector<std::string> formats = {"html", "collapsed", "pprof", "perfetto",
                                                     "torch-snapshot"};
    return formats;
}

void add_extra_options(CLI::App& app, ExtraOptions& o) {
    app.add_option("--metric", o.metric,
                   "collapsed: what a stack weighs: live-end (device bytes live at the end), peak "
                   "(at the device peak), allocated (bytes), allocations, live-count");
    app.add_option("--max-entries", o.max_entries,
                   "torch-snapshot: allocation history kept (the last N allocations and frees)");
    app.add_option("--timeline-sites", o.top_sites,
                   "html, perfetto: sites with a band / counter track of their own");
    app.add_option("--from", o.from,
                   "window start: seconds (12.5, 300ms) or an iteration (10it); memory allocated "
                   "before it is left out");
    app.add_option("--to", o.to, "window end: seconds or an iteration (inclusive)");
    // One value per occurrence (repeat the option), so that the traces after it stay traces.
    app.add_option("--pid", o.pids, "only the traces of this process (repeatable)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--device", o.device, "only allocations on this device");
    app.add_option("--min-bytes", o.min_bytes,
                   "only allocations of at least this size (e.g. 1MiB)");
    app.add_option("--baseline", o.baseline,
                   "compare with this trace of a baseline run, site by site (repeatable: one per "
                   "process, in the order of the traces)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::ExistingFile);
    app.add_option("--max-peak-increase", o.max_peak_increase,
                   "--fail-on regression: largest allowed rise of the peak (10% or 64MiB)");
    app.add_option("--max-live-end-increase", o.max_live_end_increase,
                   "--fail-on regression: largest allowed rise of memory live at the end");
    app.add_option("--max-growth-increase", o.max_growth_increase,
                   "--fail-on regression: largest allowed rise of a site's growth per iteration");
    app.add_option("--junit", o.junit, "write JUnit XML, one test case per gate, to FILE");
    app.add_option("--summary", o.summary,
                   "append a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)");
    app.add_flag("--github", o.github,
                 "print GitHub Actions annotations (::error file=...,line=...::) on stdout");
}

std::string finish_extra_options(ExtraOptions& o) {
    auto metric = parse_stack_metric(o.metric);
    if (!metric)
        return "--metric " + o.metric +
               ": one of live-end, peak, allocated, allocations, live-count";
    o.stack_metric = *metric;
    for (auto [text, target, flag] :
         {std::tuple{&o.from, &o.window.from, "--from"}, std::tuple{&o.to, &o.window.to, "--to"}}) {
        if (text->empty()) continue;
        *target = parse_window_bound(*text);
        if (!*target)
            return std::string(flag) + " " + *text +
                   ": not a time or iteration (try 12.5, 300ms, 10it)";
    }
    if (o.window.from && o.window.to && o.window.from->iterations == o.window.to->iterations &&
        o.window.from->value > o.window.to->value)
        return "--from " + o.from + " comes after --to " + o.to;
    o.window.device = o.device;
    if (!o.min_bytes.empty()) {
        auto v = parse_size(o.min_bytes);
        if (!v) return "--min-bytes " + o.min_bytes + ": not a size (try 4096, 1MiB)";
        o.window.min_bytes = *v;
    }
    for (auto [text, target, flag] :
         {std::tuple{&o.max_peak_increase, &o.thresholds.peak, "--max-peak-increase"},
          std::tuple{&o.max_live_end_increase, &o.thresholds.live_end, "--max-live-end-increase"},
          std::tuple{&o.max_growth_increase, &o.thresholds.growth, "--max-growth-increase"}}) {
        auto t = parse_threshold(*text);
        if (!t) return std::string(flag) + " " + *text + ": not a percentage or size (10%, 64MiB)";
        *target = *t;
    }
    return "";
}

void ask_aggregators(const std::string& format, const ExtraOptions& o, AnalyzeOptions& a) {
    if (format == "html" || format == "perfetto") {
        Timeline::Options t;
        // Perfetto zooms: give it finer buckets than a page needs.
        t.max_buckets = format == "perfetto" ? 20000 : 2000;
        a.timeline = t;
    }
    if (format == "torch-snapshot") a.allocation_log = o.max_entries;
    a.frame_sources = format == "html";
    a.window = o.window;
    a.pids = o.pids;
}

int write_export(const std::string& format, const std::vector<ExportInput>& in,
                 const ExtraOptions& o, std::ostream& out) {
    if (format == "collapsed") {
        render_collapsed(in, o.stack_metric, out);
    } else if (format == "pprof") {
        render_pprof(in, out);
    } else if (format == "perfetto") {
        render_perfetto(in, o.top_sites, out);
    } else if (format == "torch-snapshot") {
        if (in.size() != 1) {
            std::cerr << "gpuleak-report: --format torch-snapshot holds one process; choose one "
                         "with --pid (pids:";
            for (const ExportInput& e : in)
                std::cerr << " " << access::pid(*e.report);
            std::cerr << ")\n";
            return 2;
        }
        render_torch_snapshot(in[0], out);
    } else if (format == "html") {
        HtmlOptions h;
        h.top_sites = o.top_sites;
        render_html(in, h, out);
    }
    return 0;
}

bool finish_ci(const Gates& gates, bool fail_on_regression, const std::vector<Report>& reports,
               const std::vector<Comparison>& comparisons, const ExtraOptions& o, int& status) {
    std::vector<GateResult> results = evaluate_gates(gates, reports);
    if (fail_on_regression) results.push_back(regression_gate(comparisons, o.thresholds));
    bool ok = print_gates(results, std::cerr);
    auto write = [&](const std::string& path, bool append, auto&& body) {
        if (path.empty()) return;
        std::ofstream f(path, append ? std::ios::app : std::ios::trunc);
        if (f) body(f);
        if (!f) {
            std::cerr << "gpuleak-report: cannot write " << path << "\n";
            status = 2;
        }
    };
    write(o.junit, false, [&](std::ostream& f) { write_junit(results, f); });
    write(o.summary, true,
          [&](std::ostream& f) { write_markdown_summary(reports, results, comparisons, f); });
    if (o.github) {
        const char* ws = std::getenv("GITHUB_WORKSPACE");
        write_github_annotations(results, reports, ws ? ws : "", std::cout);
    }
    return ok;
}

} // namespace gpuleak::analyzer
