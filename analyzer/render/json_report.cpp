// The JSON report, schema "gpuleak-report/1" (docs/report-json.md). Keys are only ever added.
#include <nlohmann/json.hpp>

#include "analysis/verdicts.h"
#include "render/renderers.h"

namespace gpuleak::analyzer {
namespace {

using Json = nlohmann::ordered_json;

Json or_null(const std::string& s) {
    return s.empty() ? Json(nullptr) : Json(s);
}

Json frame_json(const Frame& f) {
    return Json{{"function", or_null(f.function)},
                {"file", or_null(f.file)},
                {"line", f.line ? Json(f.line) : Json(nullptr)},
                {"module", or_null(f.module)},
                {"kind", f.python ? "python" : "native"},
                {"inlined", f.inlined},
                {"origin", frame_origin_name(f.origin)}};
}

// The headline frame also carries its source text when the file is readable, and why it is the
// headline.
Json headline_json(const Site& site, const SiteName& name) {
    Json j = frame_json(*site.headline());
    j["source"] = or_null(name.source);
    j["index"] = site.headline_index;
    j["reason"] = site.headline_reason;
    return j;
}

Json loops_json(const Report& r) {
    Json out = Json::array();
    for (const LoopSummary& l : r.loops)
        out.push_back({{"id", l.id},
                       {"source", l.source},
                       {"name", or_null(l.name)},
                       {"thread", l.thread >= 0 ? Json(l.thread) : Json(nullptr)},
                       {"function", or_null(l.function)},
                       {"file", or_null(l.file)},
                       {"line", l.line ? Json(l.line) : Json(nullptr)},
                       {"loop_line", l.loop_line ? Json(l.loop_line) : Json(nullptr)},
                       {"iterations", l.iterations},
                       {"seen_through_cache", l.seen_through_cache},
                       {"start_s", l.start_s},
                       {"end_s", l.end_s},
                       {"allocations", l.allocations}});
    return out;
}

Json by_site_json(const std::vector<SiteBytes>& list) {
    Json out = Json::array();
    for (const auto& e : list)
        out.push_back({{"site", e.site}, {"bytes", e.bytes}});
    return out;
}

Json devices_json(uint64_t mask) {
    Json out = Json::array();
    for (int d = 0; d < 64; ++d)
        if (mask >> d & 1) out.push_back(d);
    return out;
}

} // namespace

Json report_json(const Report& r) {
    const Summary& s = r.summary;
    Json j;
    j["schema"] = "gpuleak-report/1";
    j["trace"] = r.trace_path;
    j["summary"] = {{"pid", s.pid},
                    {"command", s.command},
                    {"duration_s", s.duration_s},
                    {"events", s.events},
                    {"allocations", s.allocations},
                    {"frees", s.frees},
                    {"failed_allocations", s.failed_allocations},
                    {"peak_bytes", s.peak_bytes},
                    {"peak_time_s", s.peak_time_s},
                    {"live_bytes_end", s.live_bytes_end},
                    {"live_count_end", s.live_count_end},
                    {"managed_live_bytes_end", s.managed_live_bytes_end},
                    {"managed_live_count_end", s.managed_live_count_end},
                    {"pinned_live_bytes_end", s.pinned_live_bytes_end},
                    {"pinned_live_count_end", s.pinned_live_count_end},
                    {"imported_live_bytes_end", s.imported_live_bytes_end},
                    {"imported_live_count_end", s.imported_live_count_end},
                    {"unknown_frees", s.unknown_frees},
                    {"failed_frees", s.failed_frees},
                    {"complete", s.clean_end}};
    Json sites = Json::array();
    for (const SiteStats& st : r.sites) {
        const Site& site = r.site_table->site(st.site);
        Json frames = Json::array();
        for (const Frame& f : site.frames)
            frames.push_back(frame_json(f));
        const SiteName& name = r.names[st.site];
        uint32_t loop_iterations = st.loop >= 0 ? r.loops[st.loop].iterations : 0;
        Json apis = Json::array(), kinds = Json::array();
        for (int a = 0; a < static_cast<int>(format::Api::Count); ++a)
            if (st.apis_seen >> a & 1)
                apis.push_back(format::api_name(static_cast<format::Api>(a)));
        for (int k = 0; k < format::kMemKindCount; ++k)
            if (st.kinds_seen >> k & 1)
                kinds.push_back(format::kind_name(static_cast<format::MemKind>(k)));
        sites.push_back(
            {{"id", st.site},
             {"frames", frames},
             {"label", name.label},
             {"headline", site.headline() ? headline_json(site, name) : Json(nullptr)},
             {"apis", apis},
             {"kinds", kinds},
             {"allocations", st.allocations},
             {"bytes_allocated", st.bytes_allocated},
             {"frees", st.frees},
             {"live_count_end", st.live_count_end[0]},
             {"live_bytes_end", st.live_bytes_end[0]},
             {"managed_live_count_end", st.live_count_end[1]},
             {"managed_live_bytes_end", st.live_bytes_end[1]},
             {"pinned_live_count_end", st.live_count_end[2]},
             {"pinned_live_bytes_end", st.live_bytes_end[2]},
             {"imported_live_count_end", st.live_count_end[3]},
             {"imported_live_bytes_end", st.live_bytes_end[3]},
             {"peak_live_bytes", st.peak_live_bytes},
             {"live_bytes_at_peak", st.at_global_peak},
             {"largest_bytes", st.largest},
             {"no_python_state", site.no_python_state},
             {"verdict", verdict_name(st.verdict)},
             {"loop", st.loop >= 0 ? Json(st.loop) : Json(nullptr)},
             {"loop_threads", st.threads},
             {"growth_bytes_per_iteration", st.growth_bytes_per_iteration},
             {"confidence", st.confidence},
             {"outlived_iteration", st.outlived},
             {"accumulated_bytes", st.accumulated_bytes},
             {"live_count_at_teardown", st.live_at_teardown},
             {"live_bytes_at_teardown", st.live_bytes_at_teardown},
             {"first_iteration",
              st.first_iteration >= 0 ? Json(st.first_iteration) : Json(nullptr)},
             {"live_bytes_by_iteration", live_bytes_by_iteration(st, loop_iterations, 60)},
             {"devices", devices_json(st.devices_seen)},
             {"hints", st.hints}});
    }
    // Leaks first, then by what they hold at the end.
    std::stable_sort(sites.begin(), sites.end(), [](const Json& a, const Json& b) {
        auto rank = [](const Json& s) {
            std::string v = s["verdict"];
            return v == "leak" ? 0 : v == "accumulation" ? 1 : v == "growth" ? 2 : 3;
        };
        if (rank(a) != rank(b)) return rank(a) < rank(b);
        return a["live_bytes_end"].get<uint64_t>() > b["live_bytes_end"].get<uint64_t>();
    });
    j["sites"] = sites;
    j["iterations"] = {{"source", r.iterations.source},
                       {"loop", r.iterations.loop >= 0 ? Json(r.iterations.loop) : Json(nullptr)},
                       {"count", r.iterations.count},
                       {"markers", r.iterations.markers},
                       {"warmup", r.iterations.warmup},
                       {"clock_site", nullptr}}; // iterations come from loops now
    j["loops"] = loops_json(r);
    j["hints"] = r.hints;
    j["peak"] = {{"time_s", s.peak_time_s},
                 {"bytes", s.peak_bytes},
                 {"by_site", by_site_json(r.peak_by_site)}};
    Json ooms = Json::array();
    for (const OomEvent& o : r.ooms)
        ooms.push_back({{"time_s", o.time_s},
                        {"requested_bytes", o.requested},
                        {"api", o.api},
                        {"site", o.site},
                        {"device", o.device},
                        {"error", o.error},
                        {"live_bytes", o.live_bytes},
                        {"device_free_bytes", o.free_bytes ? Json(o.free_bytes) : Json(nullptr)},
                        {"device_total_bytes", o.total_bytes ? Json(o.total_bytes) : Json(nullptr)},
                        {"by_site", by_site_json(o.by_site)},
                        {"hints", o.hints}});
    j["ooms"] = ooms;
    Json largest = Json::array();
    for (const auto& l : r.largest)
        largest.push_back({{"bytes", l.bytes},
                           {"site", l.site},
                           {"api", l.api},
                           {"kind", l.kind},
                           {"time_s", l.time_s}});
    j["largest"] = largest;
    j["warnings"] = r.warnings;
    j["notes"] = r.notes;
    return j;
}

// Strings come from the traced process (argv, paths, thread names) and need not be UTF-8: invalid
// bytes become U+FFFD instead of an exception.
void render_json(const std::vector<Report>& reports, std::ostream& out) {
    if (reports.size() == 1) {
        out << report_json(reports[0]).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
        return;
    }
    Json j;
    j["schema"] = "gpuleak-report/1";
    Json processes = Json::array();
    uint64_t live = 0, peak_sum = 0, allocations = 0, leaks = 0;
    for (const Report& r : reports) {
        processes.push_back(report_json(r));
        live += r.summary.live_bytes_end;
        peak_sum += r.summary.peak_bytes;
        allocations += r.summary.allocations;
        for (const auto& s : r.sites)
            leaks += s.verdict == Verdict::Leak;
    }
    j["processes"] = processes;
    j["merged"] = {{"processes", reports.size()},
                   {"allocations", allocations},
                   {"live_bytes_end", live},
                   {"sum_of_peak_bytes", peak_sum},
                   {"leaking_sites", leaks}};
    out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

} // namespace gpuleak::analyzer
