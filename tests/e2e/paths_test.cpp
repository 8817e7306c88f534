// Every interception path and every C scenario, run under libgpuleak.so against the fake CUDA
// libraries: the report must match tests/apps/EXPECTED.md exactly (counts, bytes, live memory,
// the peak's composition, the leaking function). Each program also checks, with
// APPS_EXPECT_MODULE=libgpuleak, that every driver pointer it obtained lies in the preload: a path
// whose hook is removed fails both ways.
#include <gtest/gtest.h>

#include "e2e_support.h"
#include "expected_table.h"

namespace gpuleak::e2e {
namespace {

const std::map<std::string, ExpectedProgram>& expected() {
    static const auto table = load_expected(Paths::source() + "/tests/apps/EXPECTED.md");
    return table;
}

// Programs reaching the driver through the runtime: their records carry the runtime API's name.
bool through_runtime(const std::string& program) {
    // A static runtime binds its own calls internally: nothing to tag, the driver name stays.
    return program == "path_runtime_dynamic" || program.rfind("scenario_", 0) == 0;
}

void expect_matches(const std::string& program, const Json& report, const ExpectedProgram& want) {
    SCOPED_TRACE(program);
    const Json& summary = report["summary"];
    for (const auto& [key, value] : want.summary)
        EXPECT_EQ(summary[key], value) << "summary." << key;
    // Sites are whole stacks: a function called from two lines is two sites. EXPECTED.md counts per
    // function, so sum the sites each function heads.
    std::map<std::string, Json> by_function;
    for (const auto& s : report["sites"]) {
        if (s["allocations"] == 0) continue;
        Json& f = by_function[headline_function(s)];
        if (f.is_null()) {
            f = s;
            continue;
        }
        for (const char* key :
             {"allocations", "bytes_allocated", "live_count_end", "live_bytes_end",
              "managed_live_count_end", "managed_live_bytes_end", "pinned_live_count_end",
              "pinned_live_bytes_end"})
            f[key] = f[key].get<uint64_t>() + s[key].get<uint64_t>();
        f["peak_live_bytes"] =
            std::max(f["peak_live_bytes"].get<uint64_t>(), s["peak_live_bytes"].get<uint64_t>());
    }
    EXPECT_EQ(by_function.size(), want.sites.size()) << "sites in the report:\n"
                                                     << report["sites"].dump(1);
    for (const ExpectedSite& w : want.sites) {
        SCOPED_TRACE(w.function);
        ASSERT_TRUE(by_function.count(w.function)) << "no site headed by " << w.function;
        const Json& s = by_function[w.function];
        EXPECT_EQ(s["allocations"], w.allocations);
        EXPECT_EQ(s["bytes_allocated"], w.bytes_allocated);
        EXPECT_EQ(s["peak_live_bytes"], w.peak_live_bytes);
        std::string prefix = w.kind == "managed" ? "managed_" : w.kind == "pinned" ? "pinned_" : "";
        EXPECT_EQ(s[prefix + "live_count_end"], w.live_count_end);
        EXPECT_EQ(s[prefix + "live_bytes_end"], w.live_bytes_end);
        std::string kind = w.kind == "dev"      ? "device"
                           : w.kind == "pinned" ? "pinned_host"
                           : w.kind == "array"  ? "array"
                                                : "managed";
        EXPECT_EQ(s["kinds"], Json::array({kind}));
        ASSERT_EQ(s["apis"].size(), 1u);
        if (through_runtime(program))
            EXPECT_EQ(s["apis"][0].get<std::string>().rfind("cuda", 0), 0u) << s["apis"];
        else
            EXPECT_EQ(s["apis"][0], w.api);
        EXPECT_EQ(s["frames"][0]["kind"], "native");
    }
    std::map<std::string, uint64_t> peak;
    for (const auto& e : report["peak"]["by_site"]) {
        const Json* site = site_by_id(report, e["site"]);
        ASSERT_NE(site, nullptr);
        peak[headline_function(*site)] += e["bytes"].get<uint64_t>();
    }
    EXPECT_EQ(peak, want.peak_by_function);
}

class PathTest : public testing::TestWithParam<std::string> {};

TEST_P(PathTest, ReportMatchesGroundTruth) {
    const std::string program = GetParam();
    auto it = expected().find(program);
    ASSERT_NE(it, expected().end()) << program << " has no section in EXPECTED.md";
    RunOptions options;
    options.env["APPS_EXPECT_MODULE"] = "libgpuleak";
    if (program == "scenario_oom") options.env["FAKECUDA_CAPACITY"] = "67108864";
    RunResult r = run({Paths::app(program)}, options);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    expect_matches(program, report(r.traces[0]), it->second);
}

INSTANTIATE_TEST_SUITE_P(Apps, PathTest,
                         testing::Values("path_direct", "path_dlsym", "path_rtld", "path_getproc",
                                         "path_runtime_dynamic", "path_runtime_static",
                                         "path_entry_point", "path_deepbind", "vmm", "arrays",
                                         "scenario_leak_loop", "scenario_clean_loop",
                                         "scenario_kept_past_loop", "scenario_oom", "edge_cases"));

TEST(Paths, OomSnapshotNamesTheRequestAndWhatWasLive) {
    RunOptions options;
    options.env["FAKECUDA_CAPACITY"] = "67108864";
    RunResult r = run({Paths::app("scenario_oom")}, options);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Json rep = report(r.traces.at(0));
    ASSERT_EQ(rep["ooms"].size(), 1u);
    const Json& oom = rep["ooms"][0];
    EXPECT_EQ(oom["requested_bytes"], 65000065u);
    EXPECT_EQ(oom["api"], "cudaMalloc");
    EXPECT_EQ(oom["error"], 2);
    EXPECT_EQ(oom["live_bytes"], 28000010u);
    EXPECT_EQ(oom["device_total_bytes"], 67108864u);
    EXPECT_EQ(oom["device_free_bytes"], 67108864u - 28000010u);
    EXPECT_EQ(headline_function(*site_by_id(rep, oom["site"])), "oversized_batch");
    std::map<std::string, uint64_t> live;
    for (const auto& e : oom["by_site"])
        live[headline_function(*site_by_id(rep, e["site"]))] = e["bytes"];
    EXPECT_EQ(live, (std::map<std::string, uint64_t>{{"load_weights", 20000002},
                                                     {"kv_cache_alloc", 8000008}}));
    std::string text;
    ASSERT_EQ(shell("'" + Paths::report() + "' '" + r.traces[0] + "'", &text), 0);
    EXPECT_NE(text.find("cudaMalloc of 62.0 MiB failed"), std::string::npos) << text;
    EXPECT_NE(text.find("requested by oversized_batch"), std::string::npos) << text;
}

// An array the driver refuses is a failed allocation of its estimated size, with what was live.
TEST(Paths, RejectedArrayIsAFailedAllocationOfItsEstimate) {
    RunResult r = run({Paths::app("arrays")}, {});
    ASSERT_EQ(r.exit_code, 0) << r.output; // the program checks every return code itself
    Json rep = report(r.traces.at(0));
    ASSERT_EQ(rep["ooms"].size(), 1u);
    const Json& failed = rep["ooms"][0];
    EXPECT_EQ(headline_function(*site_by_id(rep, failed["site"])), "array_three_channels");
    EXPECT_EQ(failed["api"], "cuArrayCreate_v2");
    EXPECT_EQ(failed["requested_bytes"], 768u);
    EXPECT_EQ(failed["error"], 1); // CUDA_ERROR_INVALID_VALUE: not an OOM
    EXPECT_EQ(failed["live_bytes"], 16384u + 4800u);
    // cuArrayDestroy(NULL) is not recorded at all, as cuMemFree_v2(0) is not.
    EXPECT_EQ(rep["summary"]["failed_frees"], 0);
    EXPECT_EQ(rep["summary"]["unknown_frees"], 0);
}

TEST(Paths, RejectedCallsAreForwardedAndCountedApart) {
    RunResult r = run({Paths::app("edge_cases")}, {});
    ASSERT_EQ(r.exit_code, 0) << r.output; // the program checks every return code itself
    Json rep = report(r.traces.at(0));
    ASSERT_EQ(rep["ooms"].size(), 2u);
    EXPECT_EQ(headline_function(*site_by_id(rep, rep["ooms"][0]["site"])), "edge_zero_size");
    EXPECT_EQ(rep["ooms"][0]["error"], 1); // CUDA_ERROR_INVALID_VALUE: not an OOM
    EXPECT_EQ(headline_function(*site_by_id(rep, rep["ooms"][1]["site"])),
              "edge_impossible_request");
    EXPECT_EQ(rep["ooms"][1]["requested_bytes"], 1125899906842624u);
    // Double free, unknown pointer, host free of a device pointer: rejected by the driver.
    EXPECT_EQ(rep["summary"]["failed_frees"], 3);
}

TEST(Paths, ThreadsRecordExactCounts) {
    RunResult r = run({Paths::app("scenario_threads"), "20000"}, {});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Json rep = report(r.traces.at(0));
    EXPECT_EQ(rep["summary"]["allocations"], 8u * 20000 + 8);
    EXPECT_EQ(rep["summary"]["frees"], 8u * 20000);
    EXPECT_EQ(rep["summary"]["live_count_end"], 8);
    EXPECT_EQ(rep["summary"]["live_bytes_end"], 32796);
    EXPECT_EQ(rep["summary"]["unknown_frees"], 0);
    const Json* leak = site_by_function(rep, "thread_leak");
    ASSERT_NE(leak, nullptr);
    EXPECT_EQ((*leak)["live_count_end"], 8);
    EXPECT_GE(rep["summary"]["peak_bytes"], 98333u);
    EXPECT_LE(rep["summary"]["peak_bytes"], 557092u);
}

TEST(Paths, TwoDevicesAreRecordedPerDevice) {
    RunOptions options;
    options.env["FAKECUDA_DEVICES"] = "2";
    RunResult r = run({Paths::app("scenario_two_devices")}, options);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Json rep = report(r.traces.at(0));
    EXPECT_EQ(rep["summary"]["allocations"], 3);
    EXPECT_EQ(rep["summary"]["live_bytes_end"], 3000003);
    ASSERT_NE(site_by_function(rep, "device1_leak"), nullptr);
    EXPECT_EQ((*site_by_function(rep, "device1_leak"))["live_bytes_end"], 2000002);
}

TEST(Paths, ForkGivesTheChildItsOwnTrace) {
    RunResult r = run({Paths::app("scenario_fork")}, {});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.traces.size(), 2u) << r.output;
    std::map<std::string, Json> by_function;
    for (const auto& t : r.traces) {
        Json rep = report(t);
        ASSERT_EQ(rep["sites"].size(), 1u) << rep.dump(1);
        by_function[headline_function(rep["sites"][0])] = rep;
    }
    ASSERT_TRUE(by_function.count("parent_leak") && by_function.count("child_leak"));
    EXPECT_EQ(by_function["parent_leak"]["summary"]["live_bytes_end"], 6000006);
    EXPECT_EQ(by_function["child_leak"]["summary"]["live_bytes_end"], 7000007);
    EXPECT_NE(by_function["parent_leak"]["summary"]["pid"],
              by_function["child_leak"]["summary"]["pid"]);
}

TEST(Paths, ExecedChildThatNeverTouchesCudaWritesNothing) {
    RunResult r = run({Paths::app("scenario_fork_exec")}, {});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << "only the parent may write a trace";
    EXPECT_EQ(report(r.traces[0])["summary"]["live_bytes_end"], 6000006);
}

TEST(Paths, ProcessWithoutCudaStaysInert) {
    RunResult r = run({"/bin/sh", "-c", "echo hello"}, {});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.output, "hello\n");
    EXPECT_TRUE(r.traces.empty());
}

TEST(Paths, PythonCtypesThroughDlsym) {
    RunOptions options;
    options.env["LD_LIBRARY_PATH"] = Paths::fake_dir();
    RunResult r =
        run({"/usr/bin/python3", Paths::source() + "/tests/apps/python_ctypes.py"}, options);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Json rep = report(r.traces.at(0));
    EXPECT_EQ(rep["summary"]["allocations"], 3);
    EXPECT_EQ(rep["summary"]["frees"], 1);
    EXPECT_EQ(rep["summary"]["live_bytes_end"], 18000028);
    EXPECT_EQ(rep["summary"]["peak_bytes"], 27000057);
}

} // namespace
} // namespace gpuleak::e2e
