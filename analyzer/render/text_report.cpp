// The terminal report: what holds memory now, what held it at the peak, why allocations failed.
#include <algorithm>
#include <cstdio>

#include "analysis/verdicts.h"
#include "common/format_util.h"
#include "render/renderers.h"

namespace gpuleak::analyzer {
namespace {

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}

// The C runtime's own startup frames say nothing about the program.
bool startup_frame(const Frame& f) {
    return f.function.rfind("__libc_start", 0) == 0 || f.function == "_start" ||
           f.function == "Py_BytesMain" || f.function == "Py_RunMain" ||
           f.function == "pymain_main";
}

void print_stack(const Site& site, const RenderOptions& o, std::ostream& out) {
    // With Python frames, those are the user's stack; the interpreter's own frames only add noise.
    bool python = false;
    for (const Frame& f : site.frames)
        python = python || f.python;
    size_t shown = 0;
    for (const Frame& f : site.frames) {
        if (startup_frame(f)) break;
        if (python && !f.python) continue;
        if (shown++ == o.max_frames) {
            out << "        ... " << site.frames.size() - o.max_frames << " more frames\n";
            break;
        }
        out << "        " << (f.python ? "py " : "   ") << frame_function(f) << "  "
            << frame_location(f) << (f.inlined ? "  (inlined)" : "") << "\n";
    }
    if (site.frames.empty()) out << "        (no stack recorded)\n";
    if (site.no_python_state) out << "        (thread had no Python frames: native stack only)\n";
}

std::string sparkline(const std::vector<uint64_t>& values) {
    static constexpr const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    uint64_t top = 0;
    for (uint64_t v : values)
        top = std::max(top, v);
    std::string out;
    for (uint64_t v : values)
        out += kBars[top ? std::min<uint64_t>(7, v * 7 / top) : 0];
    return out;
}

// After a loop's iteration count, where all that showed of it is the caching allocator's growth.
constexpr const char* kOnlyCacheGrowth = " (only those that grew PyTorch's cache show)";

// The same loop run by several threads is one line. A library's own thread (PyTorch's autograd
// engine) loops in the library's frames; where those loops time none of its allocations (the
// program's loops do), they are the library's business: counted, not listed.
void print_loops(const Report& r, const RenderOptions& o, std::ostream& out) {
    struct Group {
        const LoopSummary* first;
        size_t threads = 0;
        uint32_t min_iterations = ~0u, max_iterations = 0;
        uint64_t allocations = 0;
    };
    std::vector<Group> groups;
    size_t library_loops = 0;
    for (const LoopSummary& l : r.loops) {
        if (l.library_thread && l.sites == 0) {
            ++library_loops;
            continue;
        }
        auto same = [&](const Group& g) {
            const LoopSummary& f = *g.first;
            return f.source == l.source && f.name == l.name && f.function == l.function &&
                   f.file == l.file && f.line == l.line && f.loop_line == l.loop_line;
        };
        auto it = std::find_if(groups.begin(), groups.end(), same);
        if (it == groups.end()) it = groups.insert(groups.end(), Group{&l});
        it->threads += 1;
        it->min_iterations = std::min(it->min_iterations, l.iterations);
        it->max_iterations = std::max(it->max_iterations, l.iterations);
        it->allocations += l.allocations;
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](auto& a, auto& b) { return a.allocations > b.allocations; });
    out << "\nLoops (" << groups.size() << ")";
    if (r.iterations.warmup)
        out << ", first " << r.iterations.warmup << " iterations of each skipped as warm-up";
    out << "\n";
    for (size_t i = 0; i < groups.size() && i < o.top; ++i) {
        const Group& g = groups[i];
        out << "  " << loop_place(*g.first) << ", " << with_commas(g.min_iterations);
        if (g.max_iterations != g.min_iterations) out << "-" << with_commas(g.max_iterations);
        out << " iteration" << (g.max_iterations == 1 ? "" : "s");
        if (g.first->seen_through_cache) out << kOnlyCacheGrowth;
        if (g.threads > 1) out << " in each of " << g.threads << " threads";
        out << "\n";
    }
    if (groups.size() > o.top) out << "  ... " << groups.size() - o.top << " more\n";
    if (library_loops)
        out << "  (and " << library_loops << " in a library's own thread that time none of its "
            << "allocations; --format json lists them)\n";
}

const char* verdict_tag(Verdict v) {
    switch (v) {
    case Verdict::Leak:
        return "LEAK  ";
    case Verdict::Accumulation:
        return "ACCUM ";
    case Verdict::Growth:
        return "GROWTH";
    default:
        return "      ";
    }
}

void print_verdicts(const Report& r, const RenderOptions& o, std::ostream& out) {
    const SiteTable& sites = *r.site_table;
    std::vector<const SiteStats*> growing, retained;
    for (const SiteStats& st : r.sites) {
        if (st.verdict == Verdict::Leak || st.verdict == Verdict::Growth ||
            st.verdict == Verdict::Accumulation)
            growing.push_back(&st);
        else if (st.verdict == Verdict::Retained)
            retained.push_back(&st);
    }
    std::stable_sort(growing.begin(), growing.end(), [](auto* a, auto* b) {
        if (a->verdict != b->verdict) return a->verdict > b->verdict;
        return a->growth_bytes_per_iteration > b->growth_bytes_per_iteration;
    });
    if (r.loops.empty()) {
        out << "\nNo loop found in the stacks, so nothing is judged per iteration. Mark each "
               "iteration with gpuleak_mark_iteration(\"step\") or an NVTX range, or name the line "
               "that starts one with --iteration-site FILE:LINE.\n";
        return;
    }
    print_loops(r, o, out);
    if (growing.empty()) out << "No site keeps more memory from one iteration to the next.\n";
    for (size_t i = 0; i < growing.size() && i < o.top; ++i) {
        const SiteStats& st = *growing[i];
        const SiteName& name = r.names[st.site];
        std::string rate = growth_rate(st.growth_bytes_per_iteration);
        char conf[32];
        std::snprintf(conf, sizeof conf, "fit R^2 %.2f", st.confidence);
        out << "  " << verdict_tag(st.verdict) << "  " << name.label
            << (name.source.empty() ? "" : " — " + name.source) << "\n";
        if (st.loop >= 0) {
            out << "        in " << loop_line(r, r.loops[st.loop]);
            if (st.threads > 1) out << " (judged in each of " << st.threads << " threads)";
            out << "\n";
        }
        out << "        " << rate << ", ";
        if (st.verdict == Verdict::Accumulation)
            out << "up to " << human_bytes(st.accumulated_bytes)
                << " held, then released after the loop; ";
        // At the last allocation, not the trace's end: what the exit frees (static destructors,
        // a framework's cache released at exit) would hide a leak.
        out << human_bytes(st.live_bytes_at_teardown) << " in " << with_commas(st.live_at_teardown)
            << " allocations still held when the program last allocated, first seen in iteration "
            << st.first_iteration << ", " << conf << "\n";
        uint32_t iterations = st.loop >= 0 ? r.loops[st.loop].iterations : 0;
        out << "        live bytes per iteration: "
            << sparkline(live_bytes_by_iteration(st, iterations, 40)) << "\n";
        for (const auto& h : st.hints)
            out << "        likely cause: " << h << "\n";
        print_stack(sites.site(st.site), o, out);
    }
    if (!retained.empty()) {
        out << "Retained across iterations but bounded (not growing): ";
        for (size_t i = 0; i < retained.size() && i < o.top; ++i)
            out << (i ? "; " : "") << r.names[retained[i]->site].label;
        if (retained.size() > o.top) out << "; ... " << retained.size() - o.top << " more";
        out << "\n";
        for (const SiteStats* st : retained)
            for (const auto& h : st->hints)
                out << "  " << r.names[st->site].label << ": likely cause: " << h << "\n";
    }
}

} // namespace

// "the loop at train.py:30" (its for/while line where the source shows it, else the line of its
// first allocation), or the marker's name.
std::string loop_place(const LoopSummary& l) {
    if (l.source == "markers") return "the iterations marked \"" + l.name + "\"";
    if (l.source == "site") return "the iterations of --iteration-site " + l.name;
    Frame f;
    f.file = l.file;
    f.line = l.loop_line ? l.loop_line : l.line;
    f.function = l.function;
    f.python = l.python;
    if (l.source == "threads")
        return "the rounds of threads running " + frame_location(f) + " (in " +
               display_function(f) + ")";
    // A library without debug info: its function is all there is to name the place.
    if (f.file.empty()) return "the loop in " + display_function(f);
    return "the loop at " + frame_location(f) + " (in " + display_function(f) + ")";
}

std::string loop_line(const Report& r, const LoopSummary& l) {
    std::string out = loop_place(l) + ", " + with_commas(l.iterations) + " iteration" +
                      (l.iterations == 1 ? "" : "s") +
                      (l.seen_through_cache ? kOnlyCacheGrowth : "");
    if (l.thread >= 0 && r.summary.pid) {
        bool several = false;
        for (const LoopSummary& o : r.loops)
            several = several || (o.thread >= 0 && o.thread != l.thread);
        if (several) out += ", thread " + std::to_string(l.thread);
    }
    return out;
}

void render_text(const Report& r, const RenderOptions& o, std::ostream& out) {
    const Summary& s = r.summary;
    const SiteTable& sites = *r.site_table;
    out << "gpuleak report for " << r.trace_path << "\n";
    out << "  process   pid " << s.pid << ": " << s.command << "\n";
    out << "  duration  " << seconds(s.duration_s) << ", " << with_commas(s.events) << " events, "
        << with_commas(s.allocations) << " allocations, " << with_commas(s.frees) << " frees, "
        << with_commas(s.failed_allocations) << " failed allocations\n";
    out << "  peak      " << human_bytes(s.peak_bytes) << " of device memory at "
        << seconds(s.peak_time_s) << "\n";
    out << "  at end    " << human_bytes(s.live_bytes_end) << " of device memory in "
        << with_commas(s.live_count_end) << " allocations";
    if (s.managed_live_bytes_end) out << "; managed " << human_bytes(s.managed_live_bytes_end);
    if (s.pinned_live_bytes_end) out << "; pinned host " << human_bytes(s.pinned_live_bytes_end);
    out << "\n";
    for (const auto& n : r.notes)
        out << "  note      " << n << "\n";
    for (const auto& w : r.warnings)
        out << "  warning   " << w << "\n";
    for (const auto& h : r.hints)
        out << "  likely cause: " << h << "\n";
    print_verdicts(r, o, out);

    std::vector<const SiteStats*> live;
    for (const SiteStats& st : r.sites)
        if (st.live_count_end[0] || st.live_count_end[1] || st.live_count_end[2])
            live.push_back(&st);
    std::sort(live.begin(), live.end(), [](auto* a, auto* b) {
        return a->live_bytes_end[0] + a->live_bytes_end[1] + a->live_bytes_end[2] >
               b->live_bytes_end[0] + b->live_bytes_end[1] + b->live_bytes_end[2];
    });
    out << "\nStill allocated at the end, by site";
    if (live.empty())
        out << ": nothing (every allocation was freed)\n";
    else
        out << " (" << live.size() << " site" << (live.size() == 1 ? "" : "s") << ")\n";
    for (size_t i = 0; i < live.size() && i < o.top; ++i) {
        const SiteStats& st = *live[i];
        out << "  #" << st.site << "  ";
        const char* kinds[] = {"device", "managed", "pinned host", "imported"};
        bool first = true;
        for (int k = 0; k < kLiveClasses; ++k) {
            if (!st.live_count_end[k]) continue;
            out << (first ? "" : ", ") << human_bytes(st.live_bytes_end[k]) << " " << kinds[k]
                << " in " << with_commas(st.live_count_end[k]) << " allocation"
                << (st.live_count_end[k] == 1 ? "" : "s");
            first = false;
        }
        out << "  (" << with_commas(st.allocations) << " allocated here, "
            << human_bytes(st.bytes_allocated) << " in total)\n";
        out << "      " << r.names[st.site].label << "\n";
        print_stack(sites.site(st.site), o, out);
    }

    if (!r.peak_by_site.empty()) {
        out << "\nAt the device peak (" << human_bytes(s.peak_bytes) << " at "
            << seconds(s.peak_time_s) << "), by site\n";
        for (size_t i = 0; i < r.peak_by_site.size() && i < o.top; ++i) {
            const auto& e = r.peak_by_site[i];
            out << "  #" << e.site << "  " << human_bytes(e.bytes) << "  " << r.names[e.site].label
                << "\n";
        }
    }

    if (!r.ooms.empty()) {
        out << "\nFailed allocations (" << with_commas(s.failed_allocations) << ")\n";
        for (size_t i = 0; i < r.ooms.size() && i < o.top; ++i) {
            const OomEvent& e = r.ooms[i];
            out << "  at " << seconds(e.time_s) << ": " << e.api << " of "
                << human_bytes(e.requested) << " failed (CUDA error " << e.error
                << (e.error == 2 ? ", out of memory" : "") << ")";
            if (e.total_bytes)
                out << "; device had " << human_bytes(e.free_bytes) << " free of "
                    << human_bytes(e.total_bytes);
            const SiteName& name = r.names[e.site];
            out << "\n      requested by " << name.label
                << (name.source.empty() ? "" : " — " + name.source) << "\n";
            for (const auto& h : e.hints)
                out << "      likely cause: " << h << "\n";
            print_stack(sites.site(e.site), o, out);
            out << "      live then: " << human_bytes(e.live_bytes) << " of device memory";
            out << (e.by_site.empty() ? "\n" : ", by site:\n");
            for (size_t k = 0; k < e.by_site.size() && k < o.top; ++k)
                out << "        #" << e.by_site[k].site << "  " << human_bytes(e.by_site[k].bytes)
                    << "  " << r.names[e.by_site[k].site].label << "\n";
        }
    }

    if (!r.largest.empty()) {
        out << "\nLargest single allocations\n";
        for (size_t i = 0; i < r.largest.size();) {
            size_t j = i;
            while (j < r.largest.size() && r.largest[j].bytes == r.largest[i].bytes &&
                   r.largest[j].site == r.largest[i].site)
                ++j;
            const auto& l = r.largest[i];
            out << "  " << human_bytes(l.bytes) << (j - i > 1 ? " x" + std::to_string(j - i) : "")
                << "  " << l.kind << " via " << l.api << "  #" << l.site << " "
                << r.names[l.site].label << "\n";
            i = j;
        }
    }
}

void render_text_merged(const std::vector<Report>& reports, std::ostream& out) {
    uint64_t live = 0, leaks = 0;
    out << "\nAll " << reports.size() << " processes together\n";
    for (const Report& r : reports) {
        live += r.summary.live_bytes_end;
        size_t n = 0;
        for (const auto& s : r.sites)
            n += s.verdict == Verdict::Leak;
        leaks += n;
        out << "  pid " << r.summary.pid << ": peak " << human_bytes(r.summary.peak_bytes) << ", "
            << human_bytes(r.summary.live_bytes_end) << " live at end, " << n << " leaking site"
            << (n == 1 ? "" : "s") << "  (" << r.summary.command << ")\n";
    }
    out << "  total: " << human_bytes(live) << " of device memory live at the end, " << leaks
        << " leaking site" << (leaks == 1 ? "" : "s") << "\n";
}

} // namespace gpuleak::analyzer
