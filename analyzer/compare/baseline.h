// Two runs compared by call site: `gpuleak-report --baseline base.bin new.bin`. Sites are matched
// by their symbolized stacks, never by addresses, so runs of different builds of the same code
// compare: first by every frame's function, file name (not its directory) and line, then, for what
// is left, by function and file name alone (lines moved by an edit).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/report.h"
#include "gates/gates.h"

namespace gpuleak::analyzer {

struct SiteDelta {
    const SiteStats* base = nullptr; // nullptr: new in this run
    const SiteStats* now = nullptr;  // nullptr: gone
    std::string match;               // "stack", "functions", "new", "gone"
    bool new_leak = false;           // leaks now, did not before (or did not exist)
    bool fixed = false;              // leaked before, does not now
    int64_t peak_delta = 0;          // the site's own peak of live bytes
    int64_t live_end_delta = 0;      // device bytes live at the end
    double growth_delta = 0;         // bytes per iteration (leak/growth verdicts; else 0)
};

struct Comparison {
    const Report* base = nullptr;
    const Report* now = nullptr;
    int64_t peak_delta = 0, live_end_delta = 0;
    size_t leaks_base = 0, leaks_now = 0;
    std::vector<SiteDelta> sites; // new leaks first, then by how much more they hold
};

Comparison compare_reports(const Report& base, const Report& now);

// "10%" of the baseline value, or an absolute size ("64MiB", "1MiB/iter").
struct Threshold {
    double fraction = 0.1;
    std::optional<uint64_t> bytes;
    uint64_t allowed(uint64_t base) const;
};
std::optional<Threshold> parse_threshold(const std::string& text);

struct RegressionThresholds {
    Threshold peak, live_end, growth;
    // Increases below these never count (noise): 1 MiB of memory, 1 KiB per iteration.
    uint64_t floor_bytes = 1 << 20, floor_growth = 1 << 10;
};

// --fail-on regression: a new leak, or the peak, live memory at the end or a site's growth per
// iteration rising beyond its threshold.
GateResult regression_gate(const std::vector<Comparison>& comparisons,
                           const RegressionThresholds& thresholds);

void render_comparison_text(const std::vector<Comparison>& comparisons, size_t top,
                            std::ostream& out);
nlohmann::ordered_json comparison_json(const std::vector<Comparison>& comparisons);

} // namespace gpuleak::analyzer
