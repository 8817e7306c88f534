// tests/apps/EXPECTED.md is the ground truth of the test programs, written for people; this reads
// its per-program sections so the end-to-end tests assert exactly what it documents.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuleak::e2e {

struct ExpectedSite {
    std::string function, api, kind; // kind: dev, managed, pinned, array
    uint64_t allocations = 0, bytes_allocated = 0, live_count_end = 0, live_bytes_end = 0,
             peak_live_bytes = 0;
};

struct ExpectedProgram {
    std::map<std::string, uint64_t> summary; // allocations, frees, ... as written in bold
    std::map<std::string, uint64_t> peak_by_function;
    std::vector<ExpectedSite> sites;
};

// Sections whose numbers are all plain integers, keyed by the section title ("vmm",
// "scenario_fork (child)"); a title naming two programs yields both.
std::map<std::string, ExpectedProgram> load_expected(const std::string& path);

} // namespace gpuleak::e2e
