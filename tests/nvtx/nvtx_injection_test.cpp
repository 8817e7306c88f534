// libgpuleak.so as an NVTX injection library (preload/nvtx), end to end: tests/nvtx/nvtx_iterations
// runs 5 iterations, each an NVTX range named "iteration" around one leaking cudaMalloc, with two
// "forward" ranges inside. The trace is read record by record (the Marker records themselves, and
// where they fall among the allocations) and through gpuleak-report (its "iterations" block).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "gpuleak/format/reader.h"

namespace gpuleak::e2e {
namespace {

constexpr uint64_t kLeakBytes = 1000001; // keep_output_leak: once per iteration
constexpr int kIterations = 5;

struct TimedRecord {
    uint64_t ts;
    format::Tag tag;
    uint64_t size;
    std::string text;
};

// Every Marker and Alloc record of the trace, in time order.
std::vector<TimedRecord> read_markers_and_allocs(const std::string& path) {
    std::vector<TimedRecord> out;
    format::TraceFile file;
    if (!file.open(path)) {
        ADD_FAILURE() << path << ": " << file.error();
        return out;
    }
    file.index_blocks();
    EXPECT_EQ(file.damage(), "");
    std::vector<uint8_t> payload;
    for (const format::BlockRef& block : file.blocks()) {
        if (!file.load(block, payload)) {
            ADD_FAILURE() << "block at " << block.offset << ": " << file.error();
            continue;
        }
        auto cursor = format::RecordCursor::block(file.version(), payload.data(), payload.size(),
                                                  block.first_ts);
        format::Record r;
        while (cursor.next(r))
            if (r.tag == format::Tag::Marker || r.tag == format::Tag::Alloc)
                out.push_back({r.ts, r.tag, r.size, r.text});
        EXPECT_EQ(cursor.error(), "");
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.ts < b.ts; });
    return out;
}

std::vector<std::string> marker_names(const std::vector<TimedRecord>& records) {
    std::vector<std::string> names;
    for (const auto& r : records)
        if (r.tag == format::Tag::Marker) names.push_back(r.text);
    return names;
}

RunResult run_program(const std::vector<std::string>& args, RunOptions options) {
    std::vector<std::string> argv{NVTX_TEST_PROGRAM};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult result = run(argv, options);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result;
}

RunOptions injected() {
    RunOptions options;
    options.env["NVTX_INJECTION64_PATH"] = Paths::preload();
    return options;
}

std::string only_trace(const RunResult& result) {
    EXPECT_EQ(result.traces.size(), 1u) << result.output;
    return result.traces.empty() ? std::string() : result.traces.front();
}

class NvtxRangeApi : public testing::TestWithParam<std::string> {};

TEST_P(NvtxRangeApi, EveryIterationRangeIsOneMarker) {
    RunResult result = run_program({GetParam()}, injected());
    std::string trace = only_trace(result);
    ASSERT_FALSE(trace.empty());

    auto records = read_markers_and_allocs(trace);
    EXPECT_EQ(marker_names(records), std::vector<std::string>(kIterations, "iteration"));
    // Each marker opens its iteration: exactly one leaking allocation between it and the next.
    int markers_seen = 0, leaks_in_iteration = 0;
    for (const auto& r : records) {
        if (r.tag == format::Tag::Marker) {
            if (markers_seen) {
                EXPECT_EQ(leaks_in_iteration, 1) << "iteration " << markers_seen;
            }
            ++markers_seen;
            leaks_in_iteration = 0;
        } else if (r.size == kLeakBytes) {
            EXPECT_GT(markers_seen, 0) << "leak allocated before the first iteration marker";
            ++leaks_in_iteration;
        }
    }
    EXPECT_EQ(leaks_in_iteration, 1);

    Json report = e2e::report(trace);
    ASSERT_TRUE(report.contains("iterations")) << report.dump(1);
    EXPECT_EQ(report["iterations"]["source"], "markers");
    EXPECT_EQ(report["iterations"]["markers"], kIterations);
    EXPECT_EQ(report["iterations"]["count"], kIterations);
    // Recording markers changes nothing else.
    const Json* leak = site_by_function(report, "keep_output_leak");
    ASSERT_NE(leak, nullptr) << report["sites"].dump(1);
    EXPECT_EQ((*leak)["live_count_end"], kIterations);
    EXPECT_EQ((*leak)["live_bytes_end"], kIterations * kLeakBytes);
}

INSTANTIATE_TEST_SUITE_P(Apis, NvtxRangeApi,
                         testing::Values("push_a", "push_w", "push_ex", "push_ex_w", "start_a",
                                         "start_w", "start_ex", "domain_push_ex", "domain_start_ex",
                                         "registered_a", "registered_w", "second_instance"),
                         [](const testing::TestParamInfo<std::string>& info) {
                             return info.param;
                         });

TEST(NvtxInjection, RangeNameComesFromTheEnvironment) {
    RunOptions options = injected();
    options.env["GPULEAK_ITERATION_RANGE"] = "forward";
    RunResult result = run_program({}, options);
    std::string trace = only_trace(result);
    ASSERT_FALSE(trace.empty());
    EXPECT_EQ(marker_names(read_markers_and_allocs(trace)),
              std::vector<std::string>(2 * kIterations, "forward"));
    Json report = e2e::report(trace);
    EXPECT_EQ(report["iterations"]["source"], "markers");
    EXPECT_EQ(report["iterations"]["markers"], 2 * kIterations);
}

TEST(NvtxInjection, NoMarkersWithoutTheInjectionPath) {
    RunResult result = run_program({}, RunOptions{});
    std::string trace = only_trace(result);
    ASSERT_FALSE(trace.empty());
    EXPECT_TRUE(marker_names(read_markers_and_allocs(trace)).empty());
    Json report = e2e::report(trace);
    EXPECT_NE(report["iterations"]["source"], "markers");
    EXPECT_EQ(report["iterations"]["markers"], 0);
}

TEST(NvtxInjection, EmptyRangeNameRecordsNothing) {
    RunOptions options = injected();
    options.env["GPULEAK_ITERATION_RANGE"] = "";
    RunResult result = run_program({}, options);
    std::string trace = only_trace(result);
    ASSERT_FALSE(trace.empty());
    EXPECT_TRUE(marker_names(read_markers_and_allocs(trace)).empty());
}

// Loaded by NVTX alone, the library would trace nothing but markers: it declines, says why, and the
// program runs as it would without a tool.
TEST(NvtxInjection, DeclinesWhenNotPreloaded) {
    RunOptions options = injected();
    options.preload = false;
    RunResult result = run_program({}, options);
    EXPECT_TRUE(result.traces.empty());
    EXPECT_NE(result.output.find("not preloaded"), std::string::npos) << result.output;
}

// As torch.cuda.nvtx.range_push: compiled NVTX (CUDA's libnvtx3interop) called from Python.
TEST(NvtxInjection, RangesOpenedFromPython) {
    const std::string python = NVTX_TEST_PYTHON, interop = NVTX_TEST_INTEROP_LIBRARY;
    if (python.empty() || interop.empty()) GTEST_SKIP() << "needs python3 and libnvtx3interop";
    RunResult result =
        run({python, NVTX_TEST_PYTHON_SCRIPT, interop, Paths::fake_dir() + "/libcudart.so.13"},
            injected());
    ASSERT_EQ(result.exit_code, 0) << result.output;
    std::string trace = only_trace(result);
    ASSERT_FALSE(trace.empty());
    EXPECT_EQ(marker_names(read_markers_and_allocs(trace)),
              std::vector<std::string>(kIterations, "iteration"));
    Json report = e2e::report(trace);
    EXPECT_EQ(report["iterations"]["source"], "markers");
    EXPECT_EQ(report["iterations"]["markers"], kIterations);
    EXPECT_EQ(report["summary"]["allocations"], kIterations) << report["summary"].dump(1);
}

// A program that never calls NVTX never loads the injection: the trace is what it always was.
TEST(NvtxInjection, InertWithoutNvtxCalls) {
    RunResult result = run({Paths::app("scenario_leak_loop")}, injected());
    EXPECT_EQ(result.exit_code, 0) << result.output;
    std::string trace = only_trace(result);
    ASSERT_FALSE(trace.empty());
    EXPECT_TRUE(marker_names(read_markers_and_allocs(trace)).empty());
    EXPECT_NE(e2e::report(trace)["iterations"]["source"], "markers");
}

} // namespace
} // namespace gpuleak::e2e
