#include "compare/baseline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "common/format_util.h"
#include "render/report_access.h"

namespace gpuleak::analyzer {
namespace {

using Json = nlohmann::ordered_json;

std::string basename(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A site's stack as text: (function, file name[, line]) per frame, innermost first. Directories,
// modules and the numbers of the compiler's clones stay out: another checkout or build of the same
// code has other ones.
std::string stack_key(const Report& r, uint32_t site, bool lines) {
    std::string key;
    for (const Frame& f : access::frames(r, site)) {
        key += source_function(f);
        key += '\x1f';
        // A frame without a file is known by its function alone: its module is the binary,
        // whose name may differ from one build to the next.
        key += basename(f.file);
        if (lines) key += ":" + std::to_string(f.line);
        key += '\x1e';
    }
    return key;
}

int64_t delta(uint64_t now, uint64_t base) {
    return static_cast<int64_t>(now) - static_cast<int64_t>(base);
}

std::string signed_bytes(int64_t d) {
    if (d == 0) return "0";
    return (d > 0 ? "+" : "-") + human_bytes(static_cast<uint64_t>(d > 0 ? d : -d));
}

std::string percent(int64_t d, uint64_t base) {
    if (!base) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%+.0f%%)", 100.0 * static_cast<double>(d) / base);
    return buf;
}

} // namespace

Comparison compare_reports(const Report& base, const Report& now) {
    Comparison c;
    c.base = &base;
    c.now = &now;
    c.peak_delta = delta(now.summary.peak_bytes, base.summary.peak_bytes);
    c.live_end_delta = delta(now.summary.live_bytes_end, base.summary.live_bytes_end);
    std::vector<const SiteStats*> base_sites, now_sites;
    for (const SiteStats& s : access::sites(base))
        if (access::allocations(s)) base_sites.push_back(&s), c.leaks_base += access::is_leak(s);
    for (const SiteStats& s : access::sites(now))
        if (access::allocations(s)) now_sites.push_back(&s), c.leaks_now += access::is_leak(s);
    // Larger sites pick first when several share a key.
    auto larger = [](const SiteStats* a, const SiteStats* b) {
        return access::own_peak_bytes(*a) > access::own_peak_bytes(*b);
    };
    std::stable_sort(base_sites.begin(), base_sites.end(), larger);
    std::stable_sort(now_sites.begin(), now_sites.end(), larger);
    std::vector<const SiteStats*> partner(now_sites.size(), nullptr);
    std::vector<std::string> how(now_sites.size());
    std::vector<bool> base_taken(base_sites.size(), false);
    for (bool lines : {true, false}) {
        std::multimap<std::string, size_t> by_key;
        for (size_t i = 0; i < base_sites.size(); ++i)
            if (!base_taken[i]) by_key.emplace(stack_key(base, base_sites[i]->site, lines), i);
        for (size_t j = 0; j < now_sites.size(); ++j) {
            if (partner[j]) continue;
            auto it = by_key.find(stack_key(now, now_sites[j]->site, lines));
            if (it == by_key.end()) continue;
            partner[j] = base_sites[it->second];
            base_taken[it->second] = true;
            how[j] = lines ? "stack" : "functions";
            by_key.erase(it);
        }
    }
    auto fill = [](SiteDelta& d) {
        uint64_t bp = d.base ? access::own_peak_bytes(*d.base) : 0;
        uint64_t np = d.now ? access::own_peak_bytes(*d.now) : 0;
        uint64_t bl = d.base ? access::live_bytes_end(*d.base) : 0;
        uint64_t nl = d.now ? access::live_bytes_end(*d.now) : 0;
        double bg = d.base ? access::growth_per_iteration(*d.base) : 0;
        double ng = d.now ? access::growth_per_iteration(*d.now) : 0;
        d.peak_delta = delta(np, bp);
        d.live_end_delta = delta(nl, bl);
        d.growth_delta = ng - bg;
        bool leaked = d.base && access::is_leak(*d.base), leaks = d.now && access::is_leak(*d.now);
        d.new_leak = leaks && !leaked;
        d.fixed = leaked && !leaks;
    };
    for (size_t j = 0; j < now_sites.size(); ++j) {
        SiteDelta d;
        d.now = now_sites[j];
        d.base = partner[j];
        d.match = partner[j] ? how[j] : "new";
        fill(d);
        c.sites.push_back(d);
    }
    for (size_t i = 0; i < base_sites.size(); ++i) {
        if (base_taken[i]) continue;
        SiteDelta d;
        d.base = base_sites[i];
        d.match = "gone";
        fill(d);
        c.sites.push_back(d);
    }
    std::stable_sort(c.sites.begin(), c.sites.end(), [](const SiteDelta& a, const SiteDelta& b) {
        if (a.new_leak != b.new_leak) return a.new_leak;
        if (a.growth_delta != b.growth_delta) return a.growth_delta > b.growth_delta;
        if (a.live_end_delta != b.live_end_delta) return a.live_end_delta > b.live_end_delta;
        return a.peak_delta > b.peak_delta;
    });
    return c;
}

uint64_t Threshold::allowed(uint64_t base) const {
    if (bytes) return *bytes;
    return static_cast<uint64_t>(std::llround(fraction * static_cast<double>(base)));
}

std::optional<Threshold> parse_threshold(const std::string& text) {
    Threshold t;
    if (!text.empty() && text.back() == '%') {
        char* end = nullptr;
        std::string number = text.substr(0, text.size() - 1);
        double v = std::strtod(number.c_str(), &end);
        if (end == number.c_str() || *end || v < 0 || !std::isfinite(v)) return std::nullopt;
        t.fraction = v / 100;
        return t;
    }
    t.bytes = parse_size(text);
    if (!t.bytes) return std::nullopt;
    return t;
}

GateResult regression_gate(const std::vector<Comparison>& comparisons,
                           const RegressionThresholds& th) {
    GateResult g;
    g.gate = "--fail-on regression";
    std::vector<std::string> reasons, totals; // new leaks and faster growth first
    for (const Comparison& c : comparisons) {
        const Report& b = *c.base;
        const Report& n = *c.now;
        auto check_total = [&](const char* what, uint64_t base, uint64_t now, const Threshold& t) {
            if (now <= base) return;
            uint64_t rise = now - base;
            if (rise < th.floor_bytes || rise <= t.allowed(base)) return;
            totals.push_back(std::string(what) + " " + human_bytes(base) + " -> " +
                             human_bytes(now) + percent(delta(now, base), base));
        };
        check_total("peak", b.summary.peak_bytes, n.summary.peak_bytes, th.peak);
        check_total("live at end", b.summary.live_bytes_end, n.summary.live_bytes_end, th.live_end);
        for (const SiteDelta& d : c.sites) {
            if (!d.now) continue;
            std::string name = access::label(n, d.now->site);
            if (d.new_leak) {
                std::string rate =
                    "+" + human_bytes(static_cast<uint64_t>(access::growth_per_iteration(*d.now))) +
                    "/iteration";
                reasons.push_back("new leak: " + name + " " + rate);
                g.sites.push_back({c.now, d.now->site, "new leak, " + rate});
                continue;
            }
            if (!d.base || !access::is_growing(*d.now)) continue;
            double bg = access::growth_per_iteration(*d.base);
            double rise = d.growth_delta;
            if (rise < static_cast<double>(th.floor_growth) ||
                rise <= static_cast<double>(th.growth.allowed(static_cast<uint64_t>(bg))))
                continue;
            std::string what = "grows faster: " + name + " " +
                               human_bytes(static_cast<uint64_t>(bg)) + " -> " +
                               human_bytes(static_cast<uint64_t>(bg + rise)) + "/iteration";
            reasons.push_back(what);
            g.sites.push_back({c.now, d.now->site, what});
        }
    }
    reasons.insert(reasons.end(), totals.begin(), totals.end());
    g.pass = reasons.empty();
    if (g.pass) {
        g.detail = "no new leak; peak, live at end and growth within thresholds";
    } else {
        for (size_t i = 0; i < reasons.size() && i < 4; ++i)
            g.detail += (i ? "; " : "") + reasons[i];
        if (reasons.size() > 4) g.detail += "; " + std::to_string(reasons.size() - 4) + " more";
    }
    return g;
}

void render_comparison_text(const std::vector<Comparison>& comparisons, size_t top,
                            std::ostream& out) {
    for (const Comparison& c : comparisons) {
        const Report& b = *c.base;
        const Report& n = *c.now;
        out << "gpuleak comparison\n  base      " << b.trace_path << " (pid " << access::pid(b)
            << ": " << access::command(b) << ")\n  new       " << n.trace_path << " (pid "
            << access::pid(n) << ": " << access::command(n) << ")\n";
        auto line = [&](const char* what, uint64_t base, uint64_t now) {
            out << "  " << what << human_bytes(base) << " -> " << human_bytes(now) << "  "
                << signed_bytes(delta(now, base)) << percent(delta(now, base), base) << "\n";
        };
        line("peak      ", b.summary.peak_bytes, n.summary.peak_bytes);
        line("at end    ", b.summary.live_bytes_end, n.summary.live_bytes_end);
        out << "  leaks     " << c.leaks_base << " -> " << c.leaks_now << " leaking sites\n";
        size_t shown = 0;
        bool header = false;
        for (const SiteDelta& d : c.sites) {
            bool interesting = d.new_leak || d.fixed || d.peak_delta || d.live_end_delta ||
                               std::abs(d.growth_delta) >= 1;
            if (!interesting) continue;
            if (shown++ == top) break;
            if (!header) {
                out << "\nSites that changed (new leaks first; matched by stack, not address):\n";
                header = true;
            }
            const Report& r = d.now ? n : b;
            const SiteStats& s = d.now ? *d.now : *d.base;
            std::string tag = d.new_leak          ? "NEW LEAK"
                              : d.fixed           ? "FIXED"
                              : d.match == "new"  ? "NEW"
                              : d.match == "gone" ? "GONE"
                                                  : "CHANGED";
            out << "  " << tag << "  " << access::label(r, s.site) << "\n        verdict "
                << (d.base ? access::verdict(*d.base) : "-") << " -> "
                << (d.now ? access::verdict(*d.now) : "-") << ", peak "
                << signed_bytes(d.peak_delta) << ", live at end " << signed_bytes(d.live_end_delta)
                << ", growth " << signed_bytes(static_cast<int64_t>(d.growth_delta))
                << "/iteration";
            if (d.match == "functions") out << " (matched by functions: lines moved)";
            out << "\n";
        }
        if (!header) out << "\nNo site changed.\n";
    }
}

Json comparison_json(const std::vector<Comparison>& comparisons) {
    auto side = [](const Report& r) {
        size_t leaks = 0;
        for (const SiteStats& s : access::sites(r))
            leaks += access::is_leak(s);
        return Json{{"trace", r.trace_path},
                    {"pid", access::pid(r)},
                    {"command", access::command(r)},
                    {"peak_bytes", r.summary.peak_bytes},
                    {"live_bytes_end", r.summary.live_bytes_end},
                    {"leaking_sites", leaks},
                    {"iterations", access::iteration_count(r)}};
    };
    auto site_json = [](const Report& r, const SiteStats* s) -> Json {
        if (!s) return nullptr;
        const Frame* f = access::headline(r, s->site);
        return Json{{"id", s->site},
                    {"label", access::label(r, s->site)},
                    {"function", f ? Json(f->function) : Json(nullptr)},
                    {"file", f && !f->file.empty() ? Json(f->file) : Json(nullptr)},
                    {"line", f && f->line ? Json(f->line) : Json(nullptr)},
                    {"verdict", access::verdict(*s)},
                    {"peak_live_bytes", access::own_peak_bytes(*s)},
                    {"live_bytes_end", access::live_bytes_end(*s)},
                    {"growth_bytes_per_iteration", access::growth_per_iteration(*s)},
                    {"allocations", access::allocations(*s)}};
    };
    Json out;
    out["schema"] = "gpuleak-compare/1";
    Json list = Json::array();
    for (const Comparison& c : comparisons) {
        Json sites = Json::array();
        for (const SiteDelta& d : c.sites)
            sites.push_back({{"match", d.match},
                             {"new_leak", d.new_leak},
                             {"fixed", d.fixed},
                             {"peak_delta_bytes", d.peak_delta},
                             {"live_end_delta_bytes", d.live_end_delta},
                             {"growth_delta_bytes_per_iteration", d.growth_delta},
                             {"base", site_json(*c.base, d.base)},
                             {"new", site_json(*c.now, d.now)}});
        list.push_back({{"base", side(*c.base)},
                        {"new", side(*c.now)},
                        {"peak_delta_bytes", c.peak_delta},
                        {"live_end_delta_bytes", c.live_end_delta},
                        {"sites", sites}});
    }
    out["comparisons"] = list;
    return out;
}

} // namespace gpuleak::analyzer
