#include "gates/gates.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "common/format_util.h"

namespace gpuleak::analyzer {

std::optional<uint64_t> parse_size(std::string text) {
    for (const char* suffix : {"/iteration", "/iter", "/it"}) {
        size_t n = std::string(suffix).size();
        if (text.size() > n && text.compare(text.size() - n, n, suffix) == 0) {
            text.resize(text.size() - n);
            break;
        }
    }
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || value < 0 || !std::isfinite(value)) return std::nullopt;
    std::string unit;
    for (; *end; ++end)
        if (!std::isspace(static_cast<unsigned char>(*end)))
            unit += static_cast<char>(std::tolower(static_cast<unsigned char>(*end)));
    double scale = 1;
    if (unit.empty() || unit == "b")
        scale = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib")
        scale = 1024.0;
    else if (unit == "m" || unit == "mb" || unit == "mib")
        scale = 1024.0 * 1024;
    else if (unit == "g" || unit == "gb" || unit == "gib")
        scale = 1024.0 * 1024 * 1024;
    else if (unit == "t" || unit == "tb" || unit == "tib")
        scale = 1024.0 * 1024 * 1024 * 1024;
    else
        return std::nullopt;
    return static_cast<uint64_t>(value * scale);
}

std::optional<std::vector<Verdict>> parse_fail_on(const std::string& text) {
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
        else
            return std::nullopt;
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    return out;
}

bool check_gates(const Gates& g, const std::vector<Report>& reports, std::ostream& err) {
    bool ok = true;
    auto verdict = [&](const std::string& gate, bool pass, const std::string& detail) {
        err << "gpuleak: " << gate << ": " << (pass ? "PASS" : "FAIL") << " (" << detail << ")\n";
        ok = ok && pass;
    };
    auto site_name = [](const Report& r, uint32_t site) { return r.names[site].label; };
    for (Verdict v : g.fail_on) {
        std::string detail;
        size_t found = 0;
        for (const Report& r : reports)
            for (const SiteStats& s : r.sites)
                if (s.verdict == v) {
                    if (found++ < 3)
                        detail += (detail.empty() ? "" : "; ") + site_name(r, s.site) + " +" +
                                  human_bytes(static_cast<uint64_t>(
                                      std::max(0.0, s.growth_bytes_per_iteration))) +
                                  "/iteration";
                }
        std::string what = v == Verdict::Leak           ? "leaking site"
                           : v == Verdict::Accumulation ? "accumulating site"
                                                        : "growing site";
        verdict(std::string("--fail-on ") + verdict_name(v), found == 0,
                found ? std::to_string(found) + " " + what + (found == 1 ? "" : "s") + ": " + detail
                      : "no " + what);
    }
    if (g.max_growth_per_iteration) {
        double worst = 0;
        std::string where = "no growing site";
        for (const Report& r : reports)
            for (const SiteStats& s : r.sites)
                if ((s.verdict == Verdict::Leak || s.verdict == Verdict::Growth ||
                     s.verdict == Verdict::Accumulation) &&
                    s.growth_bytes_per_iteration > worst) {
                    worst = s.growth_bytes_per_iteration;
                    where = site_name(r, s.site);
                }
        verdict("--max-growth " + human_bytes(*g.max_growth_per_iteration) + "/iteration",
                worst <= static_cast<double>(*g.max_growth_per_iteration),
                "largest: " + human_bytes(static_cast<uint64_t>(worst)) + "/iteration, " + where);
    }
    if (g.max_peak) {
        uint64_t worst = 0;
        for (const Report& r : reports)
            worst = std::max(worst, r.summary.peak_bytes);
        verdict("--max-peak " + human_bytes(*g.max_peak), worst <= *g.max_peak,
                "peak " + human_bytes(worst));
    }
    if (g.max_live_end) {
        uint64_t worst = 0;
        for (const Report& r : reports)
            worst = std::max(worst, r.summary.live_bytes_end);
        verdict("--max-live-end " + human_bytes(*g.max_live_end), worst <= *g.max_live_end,
                "live at end " + human_bytes(worst));
    }
    return ok;
}

} // namespace gpuleak::analyzer
