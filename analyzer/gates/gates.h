// CI gates: conditions on the reports that turn into an exit status of 1, each with a one-line
// verdict on stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/report.h"

namespace gpuleak::analyzer {

struct Gates {
    std::vector<Verdict> fail_on;                     // --fail-on: verdicts that fail the run
    std::optional<uint64_t> max_growth_per_iteration; // bytes
    std::optional<uint64_t> max_peak;
    std::optional<uint64_t> max_live_end;
    bool any() const {
        return !fail_on.empty() || max_growth_per_iteration || max_peak || max_live_end;
    }
};

// A size as common::parse_size reads it ("1GiB", "512M", "1.5 GB", "4096"; binary units),
// optionally followed by "/iter" or "/iteration". nullopt if malformed.
std::optional<uint64_t> parse_size(std::string text);

// "leak", "leak,accumulation", ...: nullopt for anything but leak, accumulation and growth, and
// "regression" where `regression` is given (set when it is named; --baseline decides it).
std::optional<std::vector<Verdict>> parse_fail_on(const std::string& text,
                                                  bool* regression = nullptr);

// One gate's outcome, with the sites that made it fail (for JUnit, annotations, summaries).
struct GateSite {
    const Report* report = nullptr;
    uint32_t site = 0;
    std::string detail; // "+1.00 MiB/iteration"
};
struct GateResult {
    std::string gate; // "--fail-on leak"
    bool pass = true;
    std::string detail;
    std::vector<GateSite> sites;
};

std::vector<GateResult> evaluate_gates(const Gates& gates, const std::vector<Report>& reports);
// One line per result to `err`; true when every one passed.
bool print_gates(const std::vector<GateResult>& results, std::ostream& err);
// Both of the above.
bool check_gates(const Gates& gates, const std::vector<Report>& reports, std::ostream& err);

} // namespace gpuleak::analyzer
