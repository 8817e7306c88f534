#include "gates/gates.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "common/format_util.h"
#include "gpuleak/common/parse.h"

namespace gpuleak::analyzer {

std::optional<uint64_t> parse_size(std::string text) {
    for (const char* suffix : {"/iteration", "/iter", "/it"}) {
        size_t n = std::string(suffix).size();
        if (text.size() > n && text.compare(text.size() - n, n, suffix) == 0) {
            text.resize(text.size() - n);
            break;
        }
    }
    return common::parse_size(text); // the preload's GPULEAK_MAX_BYTES grammar
}

std::optional<std::vector<Verdict>> parse_fail_on(const std::string& text, bool* regression) {
    std::vector<Verdict> out;
    size_t from = 0;
    while (from <= text.size()) {
        size_t comma = text.find(',', from);
        std::string word = text.substr(from, comma == std::string::npos ? comma : comma - from);
        if (word == "leak")
            out.push_back(Verdict::Leak);
        else if (word == "accumulation")
            out.push_back(Verdict::Accumulation);
        else if (word == "growth")
            out.push_back(Verdict::Growth);
        else if (word == "regression" && regression)
            *regression = true;
        else
            return std::nullopt;
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    return out;
}

std::vector<GateResult> evaluate_gates(const Gates& g, const std::vector<Report>& reports) {
    std::vector<GateResult> results;
    auto verdict = [&](const std::string& gate, bool pass, const std::string& detail) {
        results.push_back({gate, pass, detail, {}});
    };
    auto site_name = [](const Report& r, uint32_t site) { return r.names[site].label; };
    for (Verdict v : g.fail_on) {
        std::string detail;
        size_t found = 0;
        std::vector<GateSite> sites;
        for (const Report& r : reports)
            for (const SiteStats& s : r.sites)
                if (s.verdict == v) {
                    sites.push_back({&r, s.site, growth_rate(s.growth_bytes_per_iteration)});
                    if (found++ < 3)
                        detail += (detail.empty() ? "" : "; ") + site_name(r, s.site) + " " +
                                  growth_rate(s.growth_bytes_per_iteration);
                }
        std::string what = v == Verdict::Leak           ? "leaking site"
                           : v == Verdict::Accumulation ? "accumulating site"
                                                        : "growing site";
        verdict(std::string("--fail-on ") + verdict_name(v), found == 0,
                found ? std::to_string(found) + " " + what + (found == 1 ? "" : "s") + ": " + detail
                      : "no " + what);
        results.back().sites = std::move(sites);
    }
    if (g.max_growth_per_iteration) {
        double worst = 0;
        std::string where = "no growing site";
        std::vector<GateSite> sites;
        for (const Report& r : reports)
            for (const SiteStats& s : r.sites)
                if (s.verdict == Verdict::Leak || s.verdict == Verdict::Growth ||
                    s.verdict == Verdict::Accumulation) {
                    if (s.growth_bytes_per_iteration >
                        static_cast<double>(*g.max_growth_per_iteration))
                        sites.push_back({&r, s.site, growth_rate(s.growth_bytes_per_iteration)});
                    if (s.growth_bytes_per_iteration > worst) {
                        worst = s.growth_bytes_per_iteration;
                        where = site_name(r, s.site);
                    }
                }
        verdict("--max-growth " + human_bytes(*g.max_growth_per_iteration) + "/iteration",
                worst <= static_cast<double>(*g.max_growth_per_iteration),
                "largest: " + human_bytes(static_cast<uint64_t>(worst)) + "/iteration, " + where);
        results.back().sites = std::move(sites);
    }
    // The site holding the most in the worst process, named when a size gate fails.
    auto largest_holder = [&](const Report* r, bool at_peak) {
        std::vector<GateSite> sites;
        if (!r) return sites;
        auto held = [&](const SiteStats& s) {
            return at_peak ? s.at_global_peak : s.live_bytes_end[0];
        };
        const SiteStats* best = nullptr;
        for (const SiteStats& s : r->sites)
            if (held(s) && (!best || held(s) > held(*best))) best = &s;
        if (best)
            sites.push_back(
                {r, best->site,
                 human_bytes(held(*best)) + (at_peak ? " at the peak" : " live at end")});
        return sites;
    };
    if (g.max_peak) {
        uint64_t worst = 0;
        const Report* worst_report = nullptr;
        for (const Report& r : reports)
            if (!worst_report || r.summary.peak_bytes > worst)
                worst = r.summary.peak_bytes, worst_report = &r;
        verdict("--max-peak " + human_bytes(*g.max_peak), worst <= *g.max_peak,
                "peak " + human_bytes(worst));
        if (!results.back().pass) results.back().sites = largest_holder(worst_report, true);
    }
    if (g.max_live_end) {
        uint64_t worst = 0;
        const Report* worst_report = nullptr;
        for (const Report& r : reports)
            if (!worst_report || r.summary.live_bytes_end > worst)
                worst = r.summary.live_bytes_end, worst_report = &r;
        verdict("--max-live-end " + human_bytes(*g.max_live_end), worst <= *g.max_live_end,
                "live at end " + human_bytes(worst));
        if (!results.back().pass) results.back().sites = largest_holder(worst_report, false);
    }
    return results;
}

bool print_gates(const std::vector<GateResult>& results, std::ostream& err) {
    bool ok = true;
    for (const GateResult& r : results) {
        err << "gpuleak: " << r.gate << ": " << (r.pass ? "PASS" : "FAIL") << " (" << r.detail
            << ")\n";
        ok = ok && r.pass;
    }
    return ok;
}

bool check_gates(const Gates& g, const std::vector<Report>& reports, std::ostream& err) {
    return print_gates(evaluate_gates(g, reports), err);
}

} // namespace gpuleak::analyzer
