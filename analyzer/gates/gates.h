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
    bool fail_on_leak = false;
    std::optional<uint64_t> max_growth_per_iteration; // bytes
    std::optional<uint64_t> max_peak;
    std::optional<uint64_t> max_live_end;
    bool any() const {
        return fail_on_leak || max_growth_per_iteration || max_peak || max_live_end;
    }
};

// A size as common::parse_size reads it ("1GiB", "512M", "1.5 GB", "4096"; binary units),
// optionally followed by "/iter" or "/iteration". nullopt if malformed.
std::optional<uint64_t> parse_size(std::string text);

// Prints one line per gate to `err`; true when every gate passes.
bool check_gates(const Gates& gates, const std::vector<Report>& reports, std::ostream& err);

} // namespace gpuleak::analyzer
