#include "analysis/analyze.h"

#include <algorithm>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "analysis/aggregate/device_peak.h"
#include "analysis/aggregate/failed_allocations.h"
#include "analysis/aggregate/largest.h"
#include "analysis/aggregate/loop_lifetimes.h"
#include "analysis/aggregate/totals.h"
#include "analysis/hints.h"
#include "analysis/replay.h"
#include "analysis/site_names.h"
#include "model/source_files.h"

namespace gpuleak::analyzer {

namespace {

void add_frame_sources(Report& r) {
    for (const SiteStats& s : r.sites)
        for (const Frame& f : r.site_table->site(s.site).frames) {
            if (f.file.empty() || f.line <= 0) continue;
            auto key = std::make_pair(f.file, f.line);
            if (r.source_lines.count(key)) continue;
            const std::string& text = source_files().line(f.file, f.line);
            if (!text.empty()) r.source_lines.emplace(std::move(key), text);
        }
}

bool wanted(const AnalyzeOptions& options, const LoadedTrace& trace) {
    return options.pids.empty() || std::find(options.pids.begin(), options.pids.end(),
                                             trace.process.pid) != options.pids.end();
}

// A fresh symbolizer and site table: nothing asked of them yet, so sites are made, and modules
// opened, in the order the events ask.
void make_sites(Analysis& a, const AnalyzeOptions& options) {
    a.symbolizer = std::make_unique<Symbolizer>();
    if (options.read_modules)
        for (const auto& m : a.trace.modules)
            a.symbolizer->add_module(m);
    a.sites = std::make_unique<SiteTable>(a.trace, *a.symbolizer, options.stacks);
}

// The markers, which the loop pass took over as the iterations of one loop per name, in time
// order (ties in the loops' order) and, with a window, only those inside it.
void add_markers(Timeline& timeline, const Loops& loops, const Window* window) {
    struct Next {
        uint64_t ts;
        size_t loop, index;
        bool operator>(const Next& o) const { return std::tie(ts, loop) > std::tie(o.ts, o.loop); }
    };
    std::priority_queue<Next, std::vector<Next>, std::greater<>> heads;
    for (size_t i = 0; i < loops.loops.size(); ++i)
        if (loops.loops[i].source == "markers") heads.push({loops.loops[i].starts[0], i, 0});
    while (!heads.empty()) {
        Next n = heads.top();
        heads.pop();
        const Loop& l = loops.loops[n.loop];
        if (!window || window->in_time(n.ts)) timeline.add_marker(n.ts, l.name);
        if (n.index + 1 < l.starts.size()) heads.push({l.starts[n.index + 1], n.loop, n.index + 1});
    }
}

// Loops are found in pass 1, on its events in pass 2's order, once the process-wide stream has
// given every module.
class LoopsInPass1 : public TraceListener {
public:
    LoopsInPass1(Analysis& a, const AnalyzeOptions& options) : a_(a), options_(options) {}
    void on_globals(LoadedTrace& trace) override {
        if (!wanted(options_, trace)) return;
        make_sites(a_, options_);
        pass_ = std::make_unique<LoopPass>(trace, *a_.sites, options_.loops, true);
    }
    void on_event(const Event& e) override {
        if (pass_) pass_->on_event(e);
    }
    void on_passed_over(const PassedOver& passed) override {
        if (pass_) pass_->passed_over(passed);
    }
    // The pass's loops, unless something it met while pass 1 was still reading could have been
    // read otherwise with the whole trace known (analysis/loops.h's find_loops is then run).
    std::unique_ptr<LoopPass> take() {
        if (pass_ && (a_.trace.late_definitions || !pass_->definitions_complete())) pass_.reset();
        return std::move(pass_);
    }

private:
    Analysis& a_;
    const AnalyzeOptions& options_;
    std::unique_ptr<LoopPass> pass_;
};

} // namespace

bool analyze(const std::string& path, const AnalyzeOptions& options, Analysis& a,
             std::string& error) {
    LoopsInPass1 listener(a, options);
    if (!load_trace(path, a.trace, error, &listener)) return false;
    if (!wanted(options, a.trace)) {
        a.skipped = true;
        return true;
    }
    if (std::unique_ptr<LoopPass> pass = listener.take()) {
        a.loops = pass->finish();
    } else {
        make_sites(a, options);
        a.loops = find_loops(a.trace, *a.sites, options.loops);
    }

    Report& r = a.report;
    r.trace_path = a.trace.path;
    r.site_table = a.sites.get();
    r.summary.pid = a.trace.process.pid;
    r.summary.command = a.trace.process.command();
    r.summary.clean_end = a.trace.clean_end;
    Totals totals;
    DevicePeak peak;
    FailedAllocations failed(peak);
    Largest largest;
    std::vector<Aggregator*> parts = {&totals, &peak, &failed, &largest};
    std::unique_ptr<Window> window;
    if (options.window.any()) {
        window = std::make_unique<Window>(options.window);
        if (!window->resolve(a.loops, error)) return false;
    }
    if (options.timeline) {
        a.timeline = std::make_unique<Timeline>(*options.timeline);
        add_markers(*a.timeline, a.loops, window.get()); // the markers of loops not yet narrowed
    }
    if (window) a.loops = window->narrow(a.loops);
    LoopLifetimes lifetimes(a.loops);
    parts.push_back(&lifetimes);
    if (a.timeline) {
        a.timeline->add_iterations(a.loops);
        parts.push_back(a.timeline.get());
    }
    if (options.allocation_log) {
        a.allocations = std::make_unique<AllocationLog>(*options.allocation_log);
        parts.push_back(a.allocations.get());
    }
    if (window) {
        window->set_inner(parts);
        replay(a.trace, *a.sites, {window.get()}, r);
        r.notes.push_back(window->describe());
    } else {
        replay(a.trace, *a.sites, parts, r);
    }

    r.loops = summarize_loops(a.loops, a.sites->calls());
    int64_t main_loop = a.loops.main_loop();
    r.iterations.markers = a.loops.markers;
    r.iterations.warmup = a.loops.warmup;
    if (main_loop >= 0) {
        r.iterations.loop = main_loop;
        r.iterations.source = a.loops.loops[main_loop].source;
        r.iterations.count = a.loops.loops[main_loop].iterations();
    }
    name_sites(r);
    if (options.frame_sources) add_frame_sources(r);
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

void order_parents_first(std::vector<std::unique_ptr<Analysis>>& analyses) {
    std::unordered_map<uint64_t, const ProcessInfo*> by_pid; // of traces that name their process
    for (const auto& a : analyses)
        if (a->trace.have_process && a->trace.process.pid)
            by_pid.emplace(a->trace.process.pid, &a->trace.process);
    // How many processes of the job are above it; a reused pid could make a cycle: bounded.
    auto depth = [&](const ProcessInfo& p) {
        size_t d = 0;
        for (const ProcessInfo* at = &p; d < analyses.size(); ++d) {
            auto parent = by_pid.find(at->ppid);
            if (parent == by_pid.end() || parent->second == at) break;
            at = parent->second;
        }
        return d;
    };
    std::vector<std::pair<size_t, std::unique_ptr<Analysis>>> keyed;
    for (auto& a : analyses)
        keyed.emplace_back(a->trace.have_process ? depth(a->trace.process) : 0, std::move(a));
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < keyed.size(); ++i)
        analyses[i] = std::move(keyed[i].second);
}

} // namespace gpuleak::analyzer
