// The terminal report: what holds memory now, what held it at the peak, why allocations failed.
#include <algorithm>
#include <cstdio>

#include "render/format_util.h"
#include "render/renderers.h"

namespace gpuleak::analyzer {
namespace {

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}

void print_stack(const Site& site, const RenderOptions& o, std::ostream& out) {
    size_t shown = 0;
    for (const Frame& f : site.frames) {
        if (shown++ == o.max_frames) {
            out << "        ... " << site.frames.size() - o.max_frames << " more frames\n";
            break;
        }
        out << "        " << (f.python ? "py " : "   ") << frame_function(f) << "  " << frame_location(f)
            << (f.inlined ? "  (inlined)" : "") << "\n";
    }
    if (site.frames.empty()) out << "        (no stack recorded)\n";
    if (site.no_python_state) out << "        (thread had no Python frames: native stack only)\n";
}

std::string headline(const Site& site) {
    const Frame* f = site.headline();
    return f ? frame_function(*f) + " at " + frame_location(*f) : "unknown site";
}

} // namespace

void render_text(const Report& r, const RenderOptions& o, std::ostream& out) {
    const Summary& s = r.summary;
    const SiteTable& sites = *r.site_table;
    out << "gpuleak report for " << r.trace_path << "\n";
    out << "  process   pid " << s.pid << ": " << s.command << "\n";
    out << "  duration  " << seconds(s.duration_s) << ", " << with_commas(s.events) << " events, "
        << with_commas(s.allocations) << " allocations, " << with_commas(s.frees) << " frees, "
        << with_commas(s.failed_allocations) << " failed allocations\n";
    out << "  peak      " << human_bytes(s.peak_bytes) << " of device memory at " << seconds(s.peak_time_s) << "\n";
    out << "  at end    " << human_bytes(s.live_bytes_end) << " of device memory in "
        << with_commas(s.live_count_end) << " allocations";
    if (s.managed_live_bytes_end) out << "; managed " << human_bytes(s.managed_live_bytes_end);
    if (s.pinned_live_bytes_end) out << "; pinned host " << human_bytes(s.pinned_live_bytes_end);
    out << "\n";
    for (const auto& n : r.notes) out << "  note      " << n << "\n";
    for (const auto& w : r.warnings) out << "  warning   " << w << "\n";

    std::vector<const SiteStats*> live;
    for (const SiteStats& st : r.sites)
        if (st.live_count_end[0] || st.live_count_end[1] || st.live_count_end[2]) live.push_back(&st);
    std::sort(live.begin(), live.end(), [](auto* a, auto* b) {
        return a->live_bytes_end[0] + a->live_bytes_end[1] + a->live_bytes_end[2] >
               b->live_bytes_end[0] + b->live_bytes_end[1] + b->live_bytes_end[2];
    });
    out << "\nStill allocated at the end, by site";
    if (live.empty()) out << ": nothing (every allocation was freed)\n";
    else out << " (" << live.size() << " site" << (live.size() == 1 ? "" : "s") << ")\n";
    for (size_t i = 0; i < live.size() && i < o.top; ++i) {
        const SiteStats& st = *live[i];
        out << "  #" << st.site << "  ";
        const char* kinds[] = {"device", "managed", "pinned host"};
        bool first = true;
        for (int k = 0; k < 3; ++k) {
            if (!st.live_count_end[k]) continue;
            out << (first ? "" : ", ") << human_bytes(st.live_bytes_end[k]) << " " << kinds[k] << " in "
                << with_commas(st.live_count_end[k]) << " allocation" << (st.live_count_end[k] == 1 ? "" : "s");
            first = false;
        }
        out << "  (" << with_commas(st.allocations) << " allocated here, " << human_bytes(st.bytes_allocated)
            << " in total)\n";
        out << "      " << headline(sites.site(st.site)) << "\n";
        print_stack(sites.site(st.site), o, out);
    }

    if (!r.peak_by_site.empty()) {
        out << "\nAt the device peak (" << human_bytes(s.peak_bytes) << " at " << seconds(s.peak_time_s)
            << "), by site\n";
        for (size_t i = 0; i < r.peak_by_site.size() && i < o.top; ++i) {
            const auto& e = r.peak_by_site[i];
            out << "  #" << e.site << "  " << human_bytes(e.bytes) << "  " << headline(sites.site(e.site)) << "\n";
        }
    }

    if (!r.ooms.empty()) {
        out << "\nFailed allocations (" << with_commas(s.failed_allocations) << ")\n";
        for (size_t i = 0; i < r.ooms.size() && i < o.top; ++i) {
            const OomEvent& e = r.ooms[i];
            out << "  at " << seconds(e.time_s) << ": " << e.api << " of " << human_bytes(e.requested)
                << " failed (CUDA error " << e.error << (e.error == 2 ? ", out of memory" : "") << ")";
            if (e.total_bytes)
                out << "; device had " << human_bytes(e.free_bytes) << " free of " << human_bytes(e.total_bytes);
            out << "\n      requested by " << headline(sites.site(e.site)) << "\n";
            print_stack(sites.site(e.site), o, out);
            out << "      live then: " << human_bytes(e.live_bytes) << " of device memory";
            out << (e.by_site.empty() ? "\n" : ", by site:\n");
            for (size_t k = 0; k < e.by_site.size() && k < o.top; ++k)
                out << "        #" << e.by_site[k].site << "  " << human_bytes(e.by_site[k].bytes) << "  "
                    << headline(sites.site(e.by_site[k].site)) << "\n";
        }
    }

    if (!r.largest.empty()) {
        out << "\nLargest single allocations\n";
        for (const auto& l : r.largest)
            out << "  " << human_bytes(l.bytes) << "  " << l.kind << " via " << l.api << " at " << seconds(l.time_s)
                << "  #" << l.site << " " << headline(sites.site(l.site)) << "\n";
    }
}

} // namespace gpuleak::analyzer
