// Collapsed stacks: the input of flamegraph.pl and speedscope.
#include <map>

#include "common/format_util.h"
#include "render/exports.h"
#include "render/str_cat.h"

namespace gpuleak::analyzer {

std::optional<StackMetric> parse_stack_metric(const std::string& name) {
    if (name == "live-end" || name == "live") return StackMetric::LiveEnd;
    if (name == "peak" || name == "at-peak") return StackMetric::AtPeak;
    if (name == "allocated" || name == "alloc-bytes") return StackMetric::Allocated;
    if (name == "allocations" || name == "alloc-count") return StackMetric::Allocations;
    if (name == "live-count") return StackMetric::LiveCount;
    return std::nullopt;
}

uint64_t stack_metric(const SiteStats& s, StackMetric m) {
    switch (m) {
    case StackMetric::LiveEnd:
        return access::live_bytes_end(s);
    case StackMetric::AtPeak:
        return access::bytes_at_peak(s);
    case StackMetric::Allocated:
        return access::bytes_allocated(s);
    case StackMetric::Allocations:
        return access::allocations(s);
    case StackMetric::LiveCount:
        return access::live_count_end(s);
    }
    return 0;
}

void render_collapsed(const std::vector<ExportInput>& in, StackMetric metric, std::ostream& out) {
    // Identical stacks (two sites that symbolize alike) are summed, as flamegraph.pl would.
    std::map<std::string, uint64_t> lines;
    for (const ExportInput& e : in) {
        const Report& r = *e.report;
        for (const SiteStats& s : access::sites(r)) {
            uint64_t value = stack_metric(s, metric);
            if (!value) continue;
            std::string stack = in.size() > 1 ? cat("pid ", std::to_string(access::pid(r))) : "";
            const auto& frames = access::frames(r, s.site);
            for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
                std::string text = frame_text(*f);
                for (char& c : text)
                    if (c == ';' || c == '\n' || c == '\r') c = ':';
                stack.append(stack.empty() ? "" : ";").append(text);
            }
            if (frames.empty()) stack.append(stack.empty() ? "" : ";").append("[no stack]");
            lines[stack] += value;
        }
    }
    for (const auto& [stack, value] : lines)
        out << stack << " " << value << "\n";
}

} // namespace gpuleak::analyzer
