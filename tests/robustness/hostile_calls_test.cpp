// Calls a program gets wrong (double, null, unknown and wrong-kind frees, zero-size, impossible and
// malformed requests): every return code and output parameter must be the same with and without
// the preload, and none of them may count as memory.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "robustness_support.h"

namespace gpuleak::robustness {
namespace {

TEST(HostileCalls, ReturnCodesAndOutputsIdenticalWithAndWithoutThePreload) {
    e2e::RunOptions bare;
    bare.preload = false;
    e2e::RunResult without = e2e::run({program("hostile_calls")}, bare);
    e2e::RunResult with = e2e::run({program("hostile_calls")}, {});
    ASSERT_EQ(without.exit_code, 0) << without.output;
    EXPECT_EQ(with.exit_code, without.exit_code);
    EXPECT_EQ(with.output, without.output);
    EXPECT_GT(count(without.output, "\n"), 25u) << without.output;
    ASSERT_EQ(with.traces.size(), 1u) << with.output;
    Json s = e2e::report(with.traces[0])["summary"];
    // Only the two valid allocations (65536 device, 4096 pinned) happen, and both are freed.
    EXPECT_EQ(s["allocations"], 2u);
    EXPECT_EQ(s["frees"], 2u);
    EXPECT_EQ(s["live_bytes_end"], 0u);
}

TEST(HostileCalls, EdgeCasesProgramBehavesIdenticallyUnderThePreload) {
    // edge_cases checks each return code itself; here its whole output and status are compared too.
    e2e::RunOptions bare;
    bare.preload = false;
    bare.env["FAKECUDA_LOG"] = "1";
    e2e::RunOptions traced;
    traced.env["FAKECUDA_LOG"] = "1";
    e2e::RunResult without = e2e::run({e2e::Paths::app("edge_cases")}, bare);
    e2e::RunResult with = e2e::run({e2e::Paths::app("edge_cases")}, traced);
    EXPECT_EQ(with.exit_code, without.exit_code);
    // The driver's own log of every call and its result, minus arguments (addresses depend on the
    // allocator). The tracer's own queries (cuCtxGetDevice, cuMemGetInfo_v2) are not the program's.
    auto calls = [](const std::string& log) {
        std::vector<std::pair<std::string, std::string>> out;
        std::istringstream in(log);
        for (std::string line; std::getline(in, line);) {
            size_t open = line.find('('), arrow = line.rfind(" -> ");
            if (line.rfind("fakecuda: ", 0) != 0 || open == std::string::npos ||
                arrow == std::string::npos)
                continue;
            out.emplace_back(line.substr(10, open - 10), line.substr(arrow + 4));
        }
        return out;
    };
    auto program_calls = calls(without.output);
    ASSERT_FALSE(program_calls.empty()) << without.output;
    std::set<std::string> names;
    for (const auto& c : program_calls)
        names.insert(c.first);
    decltype(program_calls) traced_calls;
    for (const auto& c : calls(with.output))
        if (names.count(c.first)) traced_calls.push_back(c);
    EXPECT_EQ(traced_calls, program_calls);
}

} // namespace
} // namespace gpuleak::robustness
