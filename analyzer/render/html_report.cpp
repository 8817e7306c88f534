// The HTML report: one self-contained file (no network): the data as JSON in a <script> element,
// and the stylesheet and script (analyzer/render/html, compiled in) that draw it: summary cards, a
// timeline of live device bytes with the top sites stacked, the verdict table with sparklines and
// hints, a flame graph and the source lines of every frame. Everything drawn is bounded: the
// timeline's buckets, the table's rows, the flame graph's sites (the rest summed as one).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "common/format_util.h"
#include "html_assets.inc"
#include "render/exports.h"
#include "render/str_cat.h"

namespace gpuleak::analyzer {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kFlameSites = 2000;

// Frames interned per process: [function, location, file, line, python, source].
class FrameTable {
public:
    explicit FrameTable(const Report& r) : r_(r) {}
    size_t id(const Frame& f) {
        auto key = std::make_tuple(f.function, f.file, f.line, f.module, f.python);
        auto [it, fresh] = ids_.try_emplace(key, rows_.size());
        if (fresh)
            rows_.push_back(Json::array({frame_function(f), frame_location(f), f.file, f.line,
                                         f.python ? 1 : 0, access::frame_source(r_, f)}));
        return it->second;
    }
    Json frames(uint32_t site) {
        Json out = Json::array();
        for (const Frame& f : access::frames(r_, site))
            out.push_back(id(f));
        return out;
    }
    Json& rows() { return rows_; }

private:
    const Report& r_;
    std::map<std::tuple<std::string, std::string, int, std::string, bool>, size_t> ids_;
    Json rows_ = Json::array();
};

Json timeline_json(const Report& r, const Timeline& t, size_t top) {
    Json j;
    j["bucket_ns"] = t.bucket_ns();
    j["buckets"] = t.buckets();
    j["end_ns"] = t.end_ns();
    j["total_max"] = t.dense(t.total(), true);
    std::vector<uint64_t> total_last = t.dense(t.total(), false);
    std::vector<uint64_t> other = total_last;
    Json bands = Json::array();
    for (uint32_t site : access::top_sites_by_peak(r, top)) {
        const Timeline::Series* s = t.site(site);
        if (!s || s->points.empty()) continue;
        std::vector<uint64_t> v = t.dense(*s, false);
        for (size_t i = 0; i < v.size() && i < other.size(); ++i)
            other[i] -= std::min(other[i], v[i]);
        bands.push_back({{"site", site}, {"values", v}});
    }
    j["bands"] = bands;
    j["other"] = other;
    Json devices = Json::object();
    if (t.devices().size() > 1)
        for (const auto& [d, s] : t.devices())
            devices[std::to_string(d)] = t.dense(s, true);
    j["devices"] = devices;
    // Each loop's iteration starts; the main loop's are drawn most prominently.
    Json loops = Json::array();
    for (size_t l = 0; l < t.iterations().size(); ++l) {
        const Timeline::Marks& m = t.iterations()[l];
        if (m.kept.empty()) continue;
        Json marks = Json::array();
        for (const auto& k : m.kept)
            marks.push_back({k.ts, k.value});
        loops.push_back({{"loop", l},
                         {"main", static_cast<int64_t>(l) == access::main_loop(r)},
                         {"stride", m.stride},
                         {"count", m.seen},
                         {"marks", marks}});
    }
    j["loops"] = loops;
    Json markers = Json::array();
    for (const auto& m : t.markers().kept)
        markers.push_back({m.ts, m.name});
    j["markers"] = markers;
    j["marker_count"] = t.markers().seen;
    Json ooms = Json::array();
    for (const auto& o : t.ooms())
        ooms.push_back({o.ts, o.site, o.requested, o.device});
    j["ooms"] = ooms;
    return j;
}

Json process_json(const ExportInput& in, const HtmlOptions& o) {
    const Report& r = *in.report;
    const Summary& s = r.summary;
    FrameTable frames(r);
    Json p;
    p["pid"] = access::pid(r);
    p["command"] = access::command(r);
    p["trace"] = r.trace_path;
    size_t leaks = 0, growth = 0;
    for (const SiteStats& st : access::sites(r)) {
        leaks += access::is_leak(st);
        growth += access::is_growing(st) && !access::is_leak(st);
    }
    int64_t main = access::main_loop(r);
    p["summary"] = {
        {"duration_s", s.duration_s},
        {"events", s.events},
        {"allocations", s.allocations},
        {"frees", s.frees},
        {"failed_allocations", s.failed_allocations},
        {"peak_bytes", s.peak_bytes},
        {"peak_time_s", s.peak_time_s},
        {"live_bytes_end", s.live_bytes_end},
        {"live_count_end", s.live_count_end},
        {"iterations", access::iteration_count(r)},
        {"iteration_source", access::iteration_source(r)},
        {"main_loop", main >= 0 ? Json(access::loop_place(access::loops(r)[main])) : Json(nullptr)},
        {"loops", access::loops(r).size()},
        {"warmup", access::warmup(r)},
        {"leaks", leaks},
        {"growth", growth},
        {"complete", s.clean_end}};
    Json rows = Json::array();
    size_t n = 0;
    for (const SiteStats* st : access::ranked_sites(r)) {
        if (n++ == o.max_rows) break;
        Json f = frames.frames(st->site);
        if (f.size() > o.max_frames) f.erase(f.begin() + static_cast<long>(o.max_frames), f.end());
        const Frame* head = access::headline(r, st->site);
        int64_t loop = access::loop_of(*st);
        rows.push_back({{"id", st->site},
                        {"label", access::label(r, st->site)},
                        {"headline", head ? Json(frames.id(*head)) : Json(nullptr)},
                        {"source", access::source(r, st->site)},
                        {"loop", loop},
                        {"verdict", access::verdict(*st)},
                        {"growth", access::growth_per_iteration(*st)},
                        {"confidence", st->confidence},
                        {"live_end", access::live_bytes_end(*st)},
                        {"live_count_end", access::live_count_end(*st)},
                        {"live_end_all_kinds", access::live_bytes_end_all_kinds(*st)},
                        {"peak", access::own_peak_bytes(*st)},
                        {"at_peak", access::bytes_at_peak(*st)},
                        {"allocated", access::bytes_allocated(*st)},
                        {"allocations", access::allocations(*st)},
                        {"first_iteration", access::first_iteration(*st)},
                        {"devices", access::devices(*st)},
                        {"spark", access::sparkline(r, *st, 60)},
                        {"hints", access::hints(*st)},
                        {"frames", f}});
    }
    p["sites"] = rows;
    Json loops = Json::array();
    for (const LoopSummary& l : access::loops(r))
        loops.push_back({{"id", l.id},
                         {"main", static_cast<int64_t>(l.id) == main},
                         {"place", access::loop_place(l)},
                         {"description", access::loop_description(r, l)},
                         {"iterations", l.iterations},
                         {"source", l.source},
                         {"allocations", l.allocations}});
    p["loops"] = loops;
    p["sites_total"] = access::ranked_sites(r).size();
    // Flame graph: the sites that weigh most in any of its three metrics; the rest summed.
    std::vector<const SiteStats*> all;
    for (const SiteStats& st : access::sites(r))
        if (access::allocations(st)) all.push_back(&st);
    std::stable_sort(all.begin(), all.end(), [](const SiteStats* a, const SiteStats* b) {
        auto w = [](const SiteStats* x) {
            return std::max({access::live_bytes_end(*x), access::bytes_at_peak(*x),
                             access::bytes_allocated(*x)});
        };
        return w(a) > w(b);
    });
    Json flame = Json::array();
    uint64_t rest[3] = {0, 0, 0};
    for (size_t i = 0; i < all.size(); ++i) {
        const SiteStats& st = *all[i];
        uint64_t v[3] = {access::live_bytes_end(st), access::bytes_at_peak(st),
                         access::bytes_allocated(st)};
        if (i >= kFlameSites) {
            for (int k = 0; k < 3; ++k)
                rest[k] += v[k];
            continue;
        }
        flame.push_back({st.site, frames.frames(st.site), v[0], v[1], v[2]});
    }
    if (all.size() > kFlameSites) {
        Frame other;
        other.function = cat("[", std::to_string(all.size() - kFlameSites), " smaller sites]");
        flame.push_back({-1, Json::array({frames.id(other)}), rest[0], rest[1], rest[2]});
    }
    p["flame"] = flame;
    if (in.timeline) p["timeline"] = timeline_json(r, *in.timeline, o.top_sites);
    Json labels = Json::object();
    if (in.timeline)
        for (const auto& b : p["timeline"]["bands"])
            labels[std::to_string(b["site"].get<uint32_t>())] =
                access::label(r, b["site"].get<uint32_t>());
    for (const OomEvent& oom : r.ooms)
        labels[std::to_string(oom.site)] = access::label(r, oom.site);
    p["labels"] = labels;
    Json ooms = Json::array();
    for (const OomEvent& oom : r.ooms)
        ooms.push_back({{"time_s", oom.time_s},
                        {"requested", oom.requested},
                        {"site", oom.site},
                        {"device", oom.device},
                        {"live_bytes", oom.live_bytes},
                        {"hints", oom.hints}});
    p["ooms"] = ooms;
    p["hints"] = r.hints;
    p["notes"] = r.notes;
    p["warnings"] = r.warnings;
    p["frames"] = std::move(frames.rows());
    return p;
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '&')
            out += "&amp;";
        else if (c == '"')
            out += "&quot;";
        else
            out += c;
    }
    return out;
}

} // namespace

void render_html(const std::vector<ExportInput>& in, const HtmlOptions& options,
                 std::ostream& out) {
    Json data;
    data["schema"] = "gpuleak-html/1";
    Json processes = Json::array();
    for (const ExportInput& e : in)
        processes.push_back(process_json(e, options));
    data["processes"] = std::move(processes);
    std::string text = data.dump(-1, ' ', false, Json::error_handler_t::replace);
    // '<' only occurs inside JSON strings: as \u003c no "</script>" or "<!--" can end the element.
    std::string safe;
    safe.reserve(text.size());
    for (char c : text) {
        if (c == '<')
            safe += "\\u003c";
        else
            safe += c;
    }
    std::string title = "gpuleak report";
    if (!in.empty()) title += ": " + access::command(*in[0].report);
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>" << html_escape(json_escape(title)) << "</title>\n<style>\n"
        << k_report_css << "</style>\n</head>\n<body>\n"
        << "<div id=\"app\"><noscript>This report draws itself with JavaScript.</noscript></div>\n"
        << "<script type=\"application/json\" id=\"gpuleak-data\">" << safe << "</script>\n"
        << "<script>\n"
        << k_report_js << "</script>\n</body>\n</html>\n";
}

} // namespace gpuleak::analyzer
