// Chrome trace event JSON (the "JSON trace format" that ui.perfetto.dev and chrome://tracing
// open): one process per traced process, counter tracks ("ph":"C") for live device bytes per device
// and per top site, process-scoped instant events ("ph":"i") for failed allocations, markers and
// the device peak, and each loop's iteration starts on a track of its own (the main loop's first).
// Counters come from the timeline's buckets: each bucket gives its maximum at its start and, when
// it ends lower, its end value half a bucket later.
#include <cstdio>

#include "common/format_util.h"
#include "render/exports.h"
#include "render/str_cat.h"

namespace gpuleak::analyzer {
namespace {

// Thread ids of the loops' tracks: kLoopTrack + loop index (0 holds the counters).
constexpr size_t kLoopTrack = 1000;

std::string us(uint64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                  static_cast<unsigned long long>(ns % 1000));
    return buf;
}

class Writer {
public:
    explicit Writer(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }
    void event(const std::string& body) {
        out_ << (first_ ? "" : ",\n") << "{" << body << "}";
        first_ = false;
    }
    void finish(const std::string& tail) { out_ << "\n]," << tail << "}\n"; }

private:
    std::ostream& out_;
    bool first_ = true;
};

std::string quoted(const std::string& s) {
    return cat("\"", json_escape(s), "\"");
}

void counter_track(Writer& w, uint64_t pid, const std::string& name, const Timeline& t,
                   const Timeline::Series& s) {
    std::string head = cat("\"ph\":\"C\",\"pid\":", std::to_string(pid),
                           ",\"tid\":0,\"cat\":\"memory\",\"name\":", quoted(name), ",\"ts\":");
    uint64_t last_ns = 0;
    auto sample = [&](uint64_t ns, uint64_t v) {
        w.event(cat(head, us(ns), ",\"args\":{\"bytes\":", std::to_string(v), "}"));
        last_ns = ns;
    };
    uint64_t width = t.bucket_ns();
    bool at_zero = false;
    if (s.points.empty() || s.points.front().bucket > 0) {
        sample(0, 0);
        at_zero = true;
    }
    for (const Timeline::Point& p : s.points) {
        uint64_t start = static_cast<uint64_t>(p.bucket) * width;
        if (!(at_zero && start == 0)) sample(start, p.max);
        at_zero = false;
        if (p.last != p.max) sample(start + width / 2, p.last);
    }
    if (t.end_ns() > last_ns) sample(t.end_ns(), s.current);
}

} // namespace

void render_perfetto(const std::vector<ExportInput>& in, size_t top_sites, std::ostream& out) {
    Writer w(out);
    int sort_index = 0;
    for (const ExportInput& e : in) {
        const Report& r = *e.report;
        uint64_t pid = access::pid(r);
        std::string p = cat("\"pid\":", std::to_string(pid), ",\"tid\":0");
        w.event(cat("\"ph\":\"M\",", p, ",\"name\":\"process_name\",\"args\":{\"name\":",
                    quoted(cat("pid ", std::to_string(pid), ": ", access::command(r))), "}"));
        w.event(cat("\"ph\":\"M\",", p,
                    ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":",
                    std::to_string(sort_index++), "}"));
        w.event(
            cat("\"ph\":\"M\",", p, ",\"name\":\"thread_name\",\"args\":{\"name\":\"gpuleak\"}"));
        auto instant = [&](uint64_t ns, const std::string& category, const std::string& name,
                           const std::string& args) {
            w.event(cat("\"ph\":\"i\",\"s\":\"p\",", p, ",\"cat\":", quoted(category),
                        ",\"name\":", quoted(name), ",\"ts\":", us(ns), ",\"args\":{", args, "}"));
        };
        const Timeline* t = e.timeline;
        if (t) {
            for (const auto& [device, s] : t->devices())
                counter_track(w, pid,
                              device >= 0 ? cat("GPU ", std::to_string(device), " live bytes")
                                          : std::string("device ? live bytes"),
                              *t, s);
            for (uint32_t site : access::top_sites_by_peak(r, top_sites))
                if (const Timeline::Series* s = t->site(site))
                    counter_track(w, pid,
                                  cat("site ", std::to_string(site), ": ", access::label(r, site)),
                                  *t, *s);
            // Each loop's iterations on a track of their own, the main loop's first.
            int64_t main = access::main_loop(r);
            const auto& loops = access::loops(r);
            for (size_t l = 0; l < t->iterations().size() && l < loops.size(); ++l) {
                const Timeline::Marks& marks = t->iterations()[l];
                if (marks.kept.empty()) continue;
                bool is_main = static_cast<int64_t>(l) == main;
                std::string tid = std::to_string(kLoopTrack + l);
                std::string head = cat("\"pid\":", std::to_string(pid), ",\"tid\":", tid);
                w.event(cat("\"ph\":\"M\",", head, ",\"name\":\"thread_name\",\"args\":{\"name\":",
                            quoted(cat(is_main ? "main loop: " : "loop: ",
                                       access::loop_description(r, loops[l]))),
                            "}"));
                w.event(cat("\"ph\":\"M\",", head,
                            ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":",
                            std::to_string(is_main ? 0 : 1 + l), "}"));
                for (const Timeline::Mark& m : marks.kept)
                    w.event(cat("\"ph\":\"i\",\"s\":\"t\",", head,
                                ",\"cat\":\"iteration\",\"name\":",
                                quoted(cat("iteration ", std::to_string(m.value))),
                                ",\"ts\":", us(m.ts), ",\"args\":{\"loop\":", std::to_string(l),
                                ",\"iteration\":", std::to_string(m.value), "}"));
            }
            for (const Timeline::Mark& m : t->markers().kept)
                instant(m.ts, "marker", m.name.empty() ? "marker" : m.name,
                        cat("\"ordinal\":", std::to_string(m.value)));
            for (const Timeline::Oom& o : t->ooms())
                instant(o.ts, "oom",
                        cat("OOM: ", human_bytes(o.requested), " at ", access::label(r, o.site)),
                        cat("\"requested_bytes\":", std::to_string(o.requested), ",\"device\":",
                            std::to_string(o.device), ",\"site\":", std::to_string(o.site)));
        }
        if (r.summary.peak_bytes)
            instant(static_cast<uint64_t>(r.summary.peak_time_s * 1e9 + 0.5), "peak",
                    cat("device peak ", human_bytes(r.summary.peak_bytes)),
                    cat("\"bytes\":", std::to_string(r.summary.peak_bytes)));
    }
    std::string meta = "\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"gpuleak-report\"";
    for (const ExportInput& e : in) {
        size_t leaks = 0;
        for (const SiteStats& s : access::sites(*e.report))
            leaks += access::is_leak(s);
        meta += cat(",\"pid ", std::to_string(access::pid(*e.report)),
                    " leaking sites\":", std::to_string(leaks));
    }
    w.finish(meta + "}");
}

} // namespace gpuleak::analyzer
