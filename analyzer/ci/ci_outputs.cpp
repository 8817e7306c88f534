#include "ci/ci_outputs.h"

#include <set>

#include "common/format_util.h"
#include "render/report_access.h"

namespace gpuleak::analyzer {
namespace {

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            // XML 1.0 allows no control characters but tab, newline and carriage return.
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                out += '?';
            else
                out += ch;
        }
    }
    return out;
}

std::string site_line(const GateSite& s) {
    std::string text = access::label(*s.report, s.site);
    if (!s.detail.empty()) text += " (" + s.detail + ")";
    return text + " [pid " + std::to_string(access::pid(*s.report)) + "]";
}

// GitHub workflow commands: '%', CR and LF are escaped in the message; property values also
// escape ':' and ','.
std::string gh_data(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '%')
            out += "%25";
        else if (c == '\r')
            out += "%0D";
        else if (c == '\n')
            out += "%0A";
        else
            out += c;
    }
    return out;
}
std::string gh_property(const std::string& s) {
    std::string out;
    for (char c : gh_data(s)) {
        if (c == ':')
            out += "%3A";
        else if (c == ',')
            out += "%2C";
        else
            out += c;
    }
    return out;
}

std::string md_cell(std::string s) {
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n')
            out += ' ';
        else
            out += c;
    }
    return out;
}

} // namespace

void write_junit(const std::vector<GateResult>& results, std::ostream& out) {
    size_t failures = 0;
    for (const GateResult& r : results)
        failures += !r.pass;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<testsuites name=\"gpuleak\" tests=\"" << results.size() << "\" failures=\"" << failures
        << "\">\n"
        << "  <testsuite name=\"gpuleak\" tests=\"" << results.size() << "\" failures=\""
        << failures << "\" errors=\"0\" skipped=\"0\">\n";
    for (const GateResult& r : results) {
        out << "    <testcase classname=\"gpuleak.gates\" name=\"" << xml_escape(r.gate) << "\"";
        if (r.pass) {
            out << "/>\n";
            continue;
        }
        std::string body = r.detail;
        for (const GateSite& s : r.sites)
            body.append("\n").append(site_line(s));
        out << ">\n      <failure message=\"" << xml_escape(r.detail) << "\" type=\"gpuleak\">"
            << xml_escape(body) << "</failure>\n    </testcase>\n";
    }
    out << "  </testsuite>\n</testsuites>\n";
}

void write_github_annotations(const std::vector<GateResult>& results,
                              const std::vector<Report>& reports, const std::string& workspace,
                              std::ostream& out) {
    auto location = [&](const Report& r, uint32_t site) {
        const Frame* f = access::headline(r, site);
        std::string props;
        if (f && !f->file.empty()) {
            std::string file = f->file;
            std::string root = workspace;
            if (!root.empty() && root.back() != '/') root += '/';
            if (!root.empty() && file.rfind(root, 0) == 0) file = file.substr(root.size());
            props = "file=" + gh_property(file);
            if (f->line) props += ",line=" + std::to_string(f->line);
        }
        return props;
    };
    std::set<std::pair<const Report*, uint32_t>> done;
    for (const GateResult& g : results) {
        if (g.pass) continue;
        for (const GateSite& s : g.sites) {
            done.insert({s.report, s.site});
            std::string props = location(*s.report, s.site);
            out << "::error " << props << (props.empty() ? "" : ",")
                << "title=" << gh_property("gpuleak " + g.gate)
                << "::" << gh_data(access::label(*s.report, s.site) + ": " + s.detail) << "\n";
        }
        if (g.sites.empty())
            out << "::error title=" << gh_property("gpuleak " + g.gate) << "::" << gh_data(g.detail)
                << "\n";
    }
    for (const Report& r : reports)
        for (const SiteStats& s : access::sites(r)) {
            if (!access::is_growing(s) || done.count({&r, s.site})) continue;
            std::string props = location(r, s.site);
            out << "::warning " << props << (props.empty() ? "" : ",")
                << "title=" << gh_property("gpuleak: " + access::verdict(s)) << "::"
                << gh_data(access::label(r, s.site) + " keeps " +
                           growth_rate(access::growth_per_iteration(s)) + ", " +
                           human_bytes(access::live_bytes_end(s)) + " live at end")
                << "\n";
        }
}

void write_markdown_summary(const std::vector<Report>& reports,
                            const std::vector<GateResult>& results,
                            const std::vector<Comparison>& comparisons, std::ostream& out) {
    bool failed = false;
    for (const GateResult& g : results)
        failed = failed || !g.pass;
    out << "## gpuleak " << (results.empty() ? "" : failed ? "❌ failed" : "✅ passed") << "\n\n";
    if (!results.empty()) {
        out << "| gate | result | detail |\n|---|---|---|\n";
        for (const GateResult& g : results)
            out << "| `" << md_cell(g.gate) << "` | " << (g.pass ? "pass" : "**FAIL**") << " | "
                << md_cell(g.detail) << " |\n";
        out << "\n";
    }
    out << "| process | peak | live at end | iterations | leaking sites |\n|---|---|---|---|---|\n";
    for (const Report& r : reports) {
        size_t leaks = 0;
        for (const SiteStats& s : access::sites(r))
            leaks += access::is_leak(s);
        out << "| pid " << access::pid(r) << " `" << md_cell(access::command(r)) << "` | "
            << human_bytes(r.summary.peak_bytes) << " | " << human_bytes(r.summary.live_bytes_end)
            << " | " << access::iteration_count(r) << " | " << leaks << " |\n";
    }
    bool header = false;
    for (const Report& r : reports)
        for (const SiteStats* s : access::ranked_sites(r)) {
            if (!access::is_growing(*s)) break;
            if (!header) {
                out << "\n### Growing sites\n\n| verdict | site | growth | live at end | "
                       "source |\n|---|---|---|---|---|\n";
                header = true;
            }
            const Frame* f = access::headline(r, s->site);
            out << "| " << access::verdict(*s) << " | `" << md_cell(access::label(r, s->site))
                << "` | " << growth_rate(access::growth_per_iteration(*s)) << " | "
                << human_bytes(access::live_bytes_end(*s)) << " | ";
            if (f && !f->file.empty()) out << "`" << md_cell(f->file) << ":" << f->line << "`";
            out << " |\n";
        }
    for (const Comparison& c : comparisons) {
        out << "\n### Compared with the baseline\n\n"
            << "| | base | new | change |\n|---|---|---|---|\n";
        auto row = [&](const char* what, uint64_t b, uint64_t n) {
            int64_t d = static_cast<int64_t>(n) - static_cast<int64_t>(b);
            out << "| " << what << " | " << human_bytes(b) << " | " << human_bytes(n) << " | "
                << (d >= 0 ? "+" : "-") << human_bytes(static_cast<uint64_t>(d >= 0 ? d : -d))
                << " |\n";
        };
        row("peak", c.base->summary.peak_bytes, c.now->summary.peak_bytes);
        row("live at end", c.base->summary.live_bytes_end, c.now->summary.live_bytes_end);
        out << "| leaking sites | " << c.leaks_base << " | " << c.leaks_now << " | |\n";
        for (const SiteDelta& d : c.sites)
            if (d.new_leak)
                out << "\n- **new leak**: `" << md_cell(access::label(*c.now, d.now->site)) << "` "
                    << growth_rate(access::growth_per_iteration(*d.now)) << "\n";
    }
}

} // namespace gpuleak::analyzer
