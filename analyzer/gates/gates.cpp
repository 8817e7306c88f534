#include "gates/gates.h"

#include "gpuleak/common/parse.h"
#include "render/format_util.h"

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

bool check_gates(const Gates& g, const std::vector<Report>& reports, std::ostream& err) {
    bool ok = true;
    auto verdict = [&](const std::string& gate, bool pass, const std::string& detail) {
        err << "gpuleak: " << gate << ": " << (pass ? "PASS" : "FAIL") << " (" << detail << ")\n";
        ok = ok && pass;
    };
    auto site_name = [](const Report& r, uint32_t site) {
        const Frame* f = r.site_table->site(site).headline();
        return f ? frame_function(*f) + " at " + frame_location(*f) : std::string("unknown site");
    };
    if (g.fail_on_leak) {
        std::string detail;
        size_t leaks = 0;
        for (const Report& r : reports)
            for (const SiteStats& s : r.sites)
                if (s.verdict == Verdict::Leak) {
                    if (leaks++ < 3)
                        detail += (detail.empty() ? "" : "; ") + site_name(r, s.site) + " +" +
                                  human_bytes(static_cast<uint64_t>(
                                      std::max(0.0, s.growth_bytes_per_iteration))) +
                                  "/iteration";
                }
        verdict("--fail-on leak", leaks == 0,
                leaks ? std::to_string(leaks) + " leaking site" + (leaks == 1 ? "" : "s") + ": " +
                            detail
                      : "no leaking site");
    }
    if (g.max_growth_per_iteration) {
        double worst = 0;
        std::string where = "no growing site";
        for (const Report& r : reports)
            for (const SiteStats& s : r.sites)
                if ((s.verdict == Verdict::Leak || s.verdict == Verdict::Growth) &&
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
