// Exports, windows, the baseline comparison and CI outputs, from real traces: the README's demo
// (scenario_leak_loop), a job of two processes with three loops on two devices (multi_job.c), a
// Python program (tests/python_scenarios/seeds.py) and two builds of one program
// (regression_app.c). Each format is read by a reader that is not gpuleak's: headless Chromium
// (check_html.py), go tool pprof, Python's pickle and xml modules, and checkers of each format's
// own rules (check_*.py). Expected numbers come from the JSON report of the same trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "e2e_support.h"

namespace gpuleak::e2e {
namespace {

namespace fs = std::filesystem;

std::string exports_dir() {
    return GPULEAK_EXPORTS_SOURCE_DIR;
}

std::string artifacts_dir() {
    fs::create_directories(GPULEAK_EXPORTS_ARTIFACTS_DIR);
    return GPULEAK_EXPORTS_ARTIFACTS_DIR;
}

std::string quote(const std::string& s) {
    std::string q = "'";
    q.append(s).append("'");
    return q;
}

std::string join(const std::vector<std::string>& traces) {
    std::string out;
    for (const auto& t : traces)
        out += " " + quote(t);
    return out;
}

bool have(const std::string& tool) {
    return shell("command -v " + tool + " >/dev/null") == 0;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// gpuleak-report with `args`; its exit status, output in `out`.
int report_cmd(const std::string& args, std::string* out = nullptr) {
    return shell(quote(Paths::report()) + " " + args, out);
}

// Runs a checker script; fails the test with its output unless it exits 0.
void checker(const std::string& script, const std::string& args) {
    std::string out;
    int rc = shell("python3 " + quote(exports_dir() + "/" + script) + " " + args, &out);
    EXPECT_EQ(rc, 0) << script << " " << args << "\n" << out;
    std::cout << out;
}

struct Traces {
    RunResult run;
    std::string json; // the JSON report of all traces, written next to them
    Json report;
};

Traces traced(const std::vector<std::string>& argv, RunOptions options = {}) {
    Traces t;
    t.run = run(argv, options);
    EXPECT_EQ(t.run.exit_code, 0) << t.run.output;
    t.json = t.run.dir + "/report.json";
    EXPECT_EQ(report_cmd("--format json -o " + quote(t.json) + join(t.run.traces)), 0);
    t.report = Json::parse(read_file(t.json));
    return t;
}

Traces demo() {
    return traced({Paths::app("scenario_leak_loop")});
}

Traces job() {
    RunOptions o;
    o.env["FAKECUDA_DEVICES"] = "2";
    Traces t = traced({Paths::app("export_multi_job")}, o);
    EXPECT_EQ(t.run.traces.size(), 2u);
    return t;
}

// ---- collapsed stacks -------------------------------------------------------------------------

TEST(Collapsed, EveryMetricAddsUpOnTheDemoAndTheJob) {
    for (const Traces& t : {demo(), job()}) {
        std::string leak = t.report.contains("processes") ? "keep_activation" : "keep_output_leak";
        for (std::string metric : {"live-end", "peak", "allocated", "allocations", "live-count"}) {
            std::string out = t.run.dir + "/stacks." + metric + ".txt";
            ASSERT_EQ(report_cmd("--format collapsed --metric " + metric + " -o " + quote(out) +
                                 join(t.run.traces)),
                      0);
            checker("check_collapsed.py",
                    quote(out) + " " + quote(t.json) + " " + metric + " " + leak);
        }
    }
    std::string out;
    EXPECT_EQ(report_cmd("--format collapsed --metric sideways " + join(demo().run.traces), &out),
              2)
        << out;
}

// ---- pprof ------------------------------------------------------------------------------------

TEST(Pprof, GoToolPprofReadsTheSampleTypesAndTotals) {
    if (!have("go")) GTEST_SKIP() << "go not installed (apt-get install golang-go): pprof not read";
    for (const Traces& t : {demo(), job()}) {
        std::string prof = t.run.dir + "/profile.pb.gz";
        ASSERT_EQ(report_cmd("--format pprof -o " + quote(prof) + join(t.run.traces)), 0);
        EXPECT_EQ(read_file(prof).substr(0, 2), "\x1f\x8b") << "not gzip'd";
        std::string raw;
        ASSERT_EQ(shell("HOME=" + t.run.dir + " go tool pprof -raw " + quote(prof), &raw), 0)
            << raw;
        EXPECT_NE(raw.find("alloc_objects/count alloc_space/bytes inuse_objects/count "
                           "inuse_space/bytes[dflt]"),
                  std::string::npos)
            << raw;
        // Samples: "  N1 N2 N3 N4: loc loc ...", one per site with allocations.
        std::regex sample(R"(^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+):)");
        uint64_t sums[4] = {0, 0, 0, 0};
        size_t samples = 0;
        std::istringstream lines(raw);
        for (std::string line; std::getline(lines, line);) {
            std::smatch m;
            if (!std::regex_search(line, m, sample)) continue;
            ++samples;
            for (int k = 0; k < 4; ++k)
                sums[k] += std::stoull(m[k + 1]);
        }
        uint64_t want[4] = {0, 0, 0, 0};
        size_t sites = 0;
        auto add = [&](const Json& p) {
            for (const Json& s : p["sites"]) {
                if (!s["allocations"].get<uint64_t>()) continue;
                ++sites;
                want[0] += s["allocations"].get<uint64_t>();
                want[1] += s["bytes_allocated"].get<uint64_t>();
                want[2] += s["live_count_end"].get<uint64_t>();
                want[3] += s["live_bytes_end"].get<uint64_t>();
            }
        };
        if (t.report.contains("processes"))
            for (const Json& p : t.report["processes"])
                add(p);
        else
            add(t.report);
        EXPECT_EQ(samples, sites) << raw;
        for (int k = 0; k < 4; ++k)
            EXPECT_EQ(sums[k], want[k]) << "sample type " << k << "\n" << raw;
        // -top by live bytes: the leaking function holds the most.
        std::string top;
        ASSERT_EQ(shell("HOME=" + t.run.dir + " go tool pprof -top -sample_index=inuse_space " +
                            quote(prof),
                        &top),
                  0);
        std::string leak = t.report.contains("processes") ? "keep_activation" : "keep_output_leak";
        std::regex first_row(
            R"(flat%\s+sum%\s+cum\s+cum%\s*\n\s*\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+))");
        std::smatch m;
        ASSERT_TRUE(std::regex_search(top, m, first_row)) << top;
        EXPECT_EQ(m[1].str(), leak) << top;
        EXPECT_NE(raw.find("verdict:[leak]"), std::string::npos) << raw;
    }
}

// ---- Perfetto ---------------------------------------------------------------------------------

TEST(Perfetto, FollowsTheTraceEventFormatAndTheReport) {
    for (const Traces& t : {demo(), job()}) {
        std::string out = t.run.dir + "/trace.json";
        ASSERT_EQ(report_cmd("--format perfetto -o " + quote(out) + join(t.run.traces)), 0);
        checker("check_perfetto.py", quote(out) + " " + quote(t.json));
    }
}

// ---- PyTorch memory snapshot ------------------------------------------------------------------

TEST(TorchSnapshot, LoadsAndReplaysAsMemoryVizDoes) {
    Traces d = demo();
    std::string snap = d.run.dir + "/snapshot.pickle";
    ASSERT_EQ(report_cmd("--format torch-snapshot -o " + quote(snap) + join(d.run.traces)), 0);
    checker("check_torch_snapshot.py", quote(snap) + " " + quote(d.json) + " keep_output_leak");

    // One process of the job at a time (--pid), each checked against its own report.
    Traces j = job();
    for (const Json& p : j.report["processes"]) {
        uint64_t pid = p["summary"]["pid"];
        std::string one = j.run.dir + "/snapshot." + std::to_string(pid) + ".pickle";
        std::string json = j.run.dir + "/report." + std::to_string(pid) + ".json";
        ASSERT_EQ(report_cmd("--format torch-snapshot --pid " + std::to_string(pid) + " -o " +
                             quote(one) + join(j.run.traces)),
                  0);
        ASSERT_EQ(report_cmd("--format json --pid " + std::to_string(pid) + " -o " + quote(json) +
                             join(j.run.traces)),
                  0);
        std::string leak =
            p["summary"]["failed_allocations"] == 1 ? "keep_activation" : "child_cache";
        checker("check_torch_snapshot.py", quote(one) + " " + quote(json) + " " + leak);
    }
    std::string out;
    EXPECT_EQ(report_cmd("--format torch-snapshot -o " + quote(j.run.dir + "/x.pickle") +
                             join(j.run.traces),
                         &out),
              2);
    EXPECT_NE(out.find("--pid"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(j.run.dir + "/x.pickle"));

    // A bounded history: the last 7 allocations and frees, still consistent with the segments.
    std::string small = d.run.dir + "/small.pickle";
    ASSERT_EQ(report_cmd("--format torch-snapshot --max-entries 7 -o " + quote(small) +
                         join(d.run.traces)),
              0);
    checker("check_torch_snapshot.py", quote(small) + " " + quote(d.json) + " keep_output_leak");
    std::string trace;
    shell("python3 -c \"import pickle,sys; d=pickle.load(open(sys.argv[1],'rb')); "
          "print(d['allocator_settings']['trace_alloc_overflowed'], sum(len(t) for t in "
          "d['device_traces']))\" " +
              quote(small),
          &trace);
    // Overflowed, and at most 7 records of 2 (allocation) or 3 (free) entries each.
    EXPECT_EQ(trace.substr(0, 5), "True ") << trace;
    EXPECT_LE(std::stoi(trace.substr(5)), 21) << trace;
}

// ---- HTML in a real browser -------------------------------------------------------------------

void check_html(const Traces& t, const std::string& name, const std::string& leak,
                const std::string& extra = "") {
    std::string html = t.run.dir + "/" + name + ".html";
    ASSERT_EQ(report_cmd("--format html -o " + quote(html) + join(t.run.traces)), 0);
    // Nothing to load: no URL but the SVG namespace's name (the browser test also watches the
    // network).
    std::string text = read_file(html);
    for (size_t at; (at = text.find("http://www.w3.org/2000/svg")) != std::string::npos;)
        text.erase(at, 26);
    EXPECT_EQ(text.find("http://"), std::string::npos) << "the report must not load anything";
    EXPECT_EQ(text.find("https://"), std::string::npos) << "the report must not load anything";
    EXPECT_EQ(text.find("<script src"), std::string::npos);
    EXPECT_EQ(text.find("<link"), std::string::npos);
    if (!have("chromium") && !have("chromium-browser") && !have("google-chrome"))
        GTEST_SKIP() << "chromium not installed (apt-get install chromium): HTML not opened";
    std::string shot = artifacts_dir() + "/" + name + ".png";
    checker("check_html.py", quote(html) + " --leak-function " + leak + " --screenshot " +
                                 quote(shot) + " " + extra);
    EXPECT_TRUE(fs::exists(shot) && fs::file_size(shot) > 10000) << shot;
    fs::copy_file(html, artifacts_dir() + "/" + name + ".html",
                  fs::copy_options::overwrite_existing);
}

TEST(Html, DemoOpensInChromium) {
    check_html(demo(), "demo", "keep_output_leak",
               "--expect-text " + quote("APP_OK(cudaMalloc(&p, 1000001));") +
                   // The loop it is judged in, found in the stacks.
                   " --expect-text " +
                   quote("in the loop at scenario_leak_loop.c:29 (in main), 10 iterations"));
}

TEST(Html, JobOfTwoProcessesOpensInChromium) {
    check_html(job(), "job", "keep_activation",
               "--processes 2 --expect-text " +
                   quote("in the iterations marked \"train\", 12 iterations"));
}

TEST(Html, PythonFramesShowTheirSourceLines) {
    if (!have("python3")) GTEST_SKIP() << "python3 not installed";
    RunOptions o;
    o.env["LD_LIBRARY_PATH"] = Paths::fake_dir();
    o.env["PYTHONPATH"] = Paths::source() + "/tests/python_scenarios/site-packages";
    o.env["PYTHONDONTWRITEBYTECODE"] = "1";
    Traces t = traced(
        {"python3", Paths::source() + "/tests/python_scenarios/seeds.py", "append_output"}, o);
    const Json* leak = nullptr;
    for (const Json& s : t.report["sites"])
        if (s["verdict"] == "leak") leak = &s;
    ASSERT_TRUE(leak) << t.report.dump(1);
    ASSERT_EQ((*leak)["headline"]["kind"], "python");
    check_html(t, "python", "append_output", "--expect-text " + quote("output = model(x)  # LEAK"));
}

TEST(Html, SizeStaysBoundedAsTracesGrow) {
    std::string synth = Paths::build() + "/bench/trace_synth";
    if (!fs::exists(synth)) GTEST_SKIP() << synth << " not built";
    RunOptions none;
    none.preload = false;
    std::string dir = run({"true"}, none).dir;
    uint64_t sizes[2];
    int k = 0;
    for (const char* events : {"20000", "2000000"}) {
        std::string trace = dir + "/synth." + events + ".bin", html = trace + ".html";
        ASSERT_EQ(shell(quote(synth) + " --out " + quote(trace) + " --events " + events +
                        " --sites 300 --markers 1 >/dev/null"),
                  0);
        ASSERT_EQ(report_cmd("--format html -o " + quote(html) + " " + quote(trace)), 0);
        sizes[k++] = fs::file_size(html);
    }
    // 100 times the events: the timeline's buckets, the table's rows and the flame graph's sites
    // are bounded, so the page barely grows.
    EXPECT_LT(sizes[1], 2 * 1024 * 1024) << sizes[1];
    EXPECT_LT(sizes[1], sizes[0] * 3) << sizes[0] << " -> " << sizes[1];
}

// ---- windows ----------------------------------------------------------------------------------

TEST(Windows, IterationsCutTheReportAndEveryExport) {
    Traces d = demo(); // 10 iterations, each: keep_output_leak (kept) then transient_workspace
    Json w = report(d.run.traces[0], {"--from", "3it", "--to", "6it"});
    // Iterations 3..6 are four iterations: four of each site's allocations.
    const Json* keep = site_by_function(w, "keep_output_leak");
    const Json* work = site_by_function(w, "transient_workspace");
    ASSERT_TRUE(keep && work) << w.dump(1);
    EXPECT_EQ((*keep)["allocations"], 4);
    EXPECT_EQ((*keep)["live_bytes_end"], 4 * 1000001);
    EXPECT_EQ((*work)["allocations"], 4);
    EXPECT_EQ(w["summary"]["unknown_frees"], 0);
    bool noted = false;
    for (const Json& n : w["notes"])
        noted = noted || n.get<std::string>().find("window: from iteration 3 to iteration 6") !=
                             std::string::npos;
    EXPECT_TRUE(noted) << w["notes"].dump();
    // The same window reaches the exports: the collapsed stacks add up to the windowed report.
    std::string json = d.run.dir + "/window.json", stacks = d.run.dir + "/window.txt";
    std::ofstream(json) << w.dump();
    ASSERT_EQ(report_cmd("--from 3it --to 6it --format collapsed --metric allocated -o " +
                         quote(stacks) + join(d.run.traces)),
              0);
    checker("check_collapsed.py",
            quote(stacks) + " " + quote(json) + " allocated keep_output_leak");
    std::string perfetto = d.run.dir + "/window.perfetto.json";
    ASSERT_EQ(report_cmd("--from 3it --to 6it --format perfetto -o " + quote(perfetto) +
                         join(d.run.traces)),
              0);
    checker("check_perfetto.py", quote(perfetto) + " " + quote(json));
}

TEST(Windows, SecondsDeviceMinBytesAndPid) {
    Traces j = job();
    // --device 1: only the parent's evaluation loop and its failed request.
    std::string out;
    ASSERT_EQ(report_cmd("--format json --device 1" + join(j.run.traces), &out), 0);
    Json r = Json::parse(out);
    for (const Json& p : r["processes"]) {
        for (const Json& s : p["sites"]) {
            if (!s["allocations"].get<uint64_t>()) continue;
            EXPECT_EQ(s["devices"], Json::array({1})) << s.dump();
            EXPECT_EQ(headline_function(s), "eval_batch") << s.dump();
        }
        EXPECT_EQ(p["summary"]["live_bytes_end"], 0);
    }
    // --min-bytes: the demo's 3000003-byte workspace only.
    Traces d = demo();
    Json big = report(d.run.traces[0], {"--min-bytes", "2MiB"});
    EXPECT_EQ(big["summary"]["allocations"], 10);
    EXPECT_EQ(big["summary"]["live_bytes_end"], 0);
    EXPECT_EQ(big["summary"]["unknown_frees"], 0);
    // --from/--to in seconds: up to the device peak's time, nothing after it.
    double peak_t = d.report["summary"]["peak_time_s"];
    char to[32];
    std::snprintf(to, sizeof to, "%.9f", peak_t);
    Json early = report(d.run.traces[0], {"--to", to});
    EXPECT_EQ(early["summary"]["peak_bytes"], d.report["summary"]["peak_bytes"]);
    EXPECT_EQ(early["summary"]["allocations"], d.report["summary"]["allocations"]);
    EXPECT_EQ(early["summary"]["frees"].get<uint64_t>() + 1, d.report["summary"]["frees"]);
    Json late = report(d.run.traces[0], {"--from", "1000s"});
    EXPECT_EQ(late["summary"]["allocations"], 0);
    // --pid: one process of the job.
    uint64_t pid = j.report["processes"][1]["summary"]["pid"];
    ASSERT_EQ(report_cmd("--format json --pid " + std::to_string(pid) + join(j.run.traces), &out),
              0);
    EXPECT_EQ(Json::parse(out)["summary"]["pid"], pid);
    EXPECT_EQ(report_cmd("--pid 1" + join(j.run.traces), &out), 2) << out;
    EXPECT_EQ(report_cmd("--from soon" + join(j.run.traces), &out), 2) << out;
}

// ---- baseline ---------------------------------------------------------------------------------

TEST(Baseline, NewLeakFirstAcrossTwoBuilds) {
    Traces base = traced({Paths::app("regression_base")});
    Traces now = traced({Paths::app("regression_new")});
    std::string out;
    ASSERT_EQ(report_cmd("--format json --baseline " + quote(base.run.traces[0]) + " " +
                             quote(now.run.traces[0]),
                         &out),
              0);
    Json c = Json::parse(out);
    ASSERT_EQ(c["schema"], "gpuleak-compare/1");
    const Json& sites = c["comparisons"][0]["sites"];
    ASSERT_FALSE(sites.empty());
    EXPECT_TRUE(sites[0]["new_leak"].get<bool>()) << sites.dump(1);
    EXPECT_EQ(sites[0]["new"]["function"], "keep_output");
    EXPECT_EQ(sites[0]["match"], "new");
    // The same code in a different binary, its lines moved: matched by function and file.
    bool weights = false, scratch = false;
    for (const Json& s : sites) {
        if (s["new"].is_null() || s["base"].is_null()) continue;
        weights = weights || (s["new"]["function"] == "load_weights" && s["match"] == "functions");
        scratch = scratch || (s["new"]["function"] == "step_scratch" && s["match"] == "functions");
    }
    EXPECT_TRUE(weights && scratch) << sites.dump(1);
    EXPECT_EQ(c["comparisons"][0]["live_end_delta_bytes"], 10 * 1000000);

    ASSERT_EQ(report_cmd("--baseline " + quote(base.run.traces[0]) + " " + quote(now.run.traces[0]),
                         &out),
              0);
    EXPECT_NE(out.find("NEW LEAK  keep_output at regression_app.c:"), std::string::npos) << out;

    std::string junit = now.run.dir + "/junit.xml";
    int rc = report_cmd("--fail-on regression --junit " + quote(junit) + " --baseline " +
                            quote(base.run.traces[0]) + " " + quote(now.run.traces[0]),
                        &out);
    EXPECT_EQ(rc, 1) << out;
    EXPECT_NE(out.find("--fail-on regression: FAIL (new leak: keep_output at regression_app.c:"),
              std::string::npos)
        << out;
    checker("check_junit.py", quote(junit) + " 1 1 'new leak: keep_output'");

    // Against itself (two runs of one build): no regression.
    Traces again = traced({Paths::app("regression_base")});
    rc = report_cmd("--fail-on regression --baseline " + quote(base.run.traces[0]) + " " +
                        quote(again.run.traces[0]),
                    &out);
    EXPECT_EQ(rc, 0) << out;
    // Thresholds: the new build's live memory at the end rose by 10 MB (from 4 MB).
    rc = report_cmd("--fail-on regression --max-live-end-increase 200MiB --baseline " +
                        quote(base.run.traces[0]) + " " + quote(now.run.traces[0]),
                    &out);
    EXPECT_EQ(rc, 1) << out; // still a new leak
    EXPECT_EQ(out.find("live at end 3.81 MiB"), std::string::npos) << out;
    rc = report_cmd("--fail-on regression --baseline " + quote(now.run.traces[0]) + " " +
                        quote(base.run.traces[0]),
                    &out);
    EXPECT_EQ(rc, 0) << "fixing a leak is no regression\n" << out;
}

// One program built at -O2 and at -O3, where GCC clones a helper per constant it is called with:
// the stacks differ only in the clones' names ("forward(unsigned long) [clone .constprop.0]"),
// which are no change of the code.
TEST(Baseline, ClonesOfAFunctionMatchTheFunctionInAnotherBuild) {
    Traces base = traced({Paths::app("optimized_scenarios_O2"), "cloned_helper"});
    Traces now = traced({Paths::app("optimized_scenarios"), "cloned_helper"});
    std::string out;
    ASSERT_EQ(report_cmd("--format json " + quote(now.run.traces[0]), &out), 0);
    if (out.find(" [clone .") == std::string::npos)
        GTEST_SKIP() << "this compiler made no clone of forward() at -O3: nothing to test";
    ASSERT_EQ(report_cmd("--format json --baseline " + quote(base.run.traces[0]) + " " +
                             quote(now.run.traces[0]),
                         &out),
              0);
    const Json sites = Json::parse(out)["comparisons"][0]["sites"];
    EXPECT_EQ(sites.size(), 2u) << sites.dump(1);
    for (const Json& s : sites)
        EXPECT_EQ(s["match"], "stack") << s.dump(1);
    int rc = report_cmd("--fail-on regression --baseline " + quote(base.run.traces[0]) + " " +
                            quote(now.run.traces[0]),
                        &out);
    EXPECT_EQ(rc, 0) << out;
}

// ---- CI outputs -------------------------------------------------------------------------------

TEST(Ci, JunitAnnotationsAndSummary) {
    Traces d = demo();
    std::string junit = d.run.dir + "/junit.xml", summary = d.run.dir + "/summary.md";
    std::string out;
    int rc =
        shell("GITHUB_WORKSPACE=" + quote(Paths::source()) + " " + quote(Paths::report()) +
                  " --fail-on leak --max-peak 1GiB --max-live-end 1MiB --junit " + quote(junit) +
                  " --summary " + quote(summary) + " --github -o /dev/null" + join(d.run.traces),
              &out);
    EXPECT_EQ(rc, 1) << out;
    // Three gates: leak and live-end fail, the peak passes.
    checker("check_junit.py", quote(junit) + " 3 2 keep_output_leak");
    // The annotation points at the leaking line, relative to the workspace.
    EXPECT_NE(out.find("::error file=tests/apps/scenario_leak_loop.c,line=17,title=gpuleak "
                       "--fail-on leak::keep_output_leak at scenario_leak_loop.c:17"),
              std::string::npos)
        << out;
    std::string md = read_file(summary);
    EXPECT_NE(md.find("| `--fail-on leak` | **FAIL** |"), std::string::npos) << md;
    EXPECT_NE(md.find("| `--max-peak 1.00 GiB` | pass |"), std::string::npos) << md;
    EXPECT_NE(md.find("| leak | `keep_output_leak at scenario_leak_loop.c:17` |"),
              std::string::npos)
        << md;
    // --summary appends (GITHUB_STEP_SUMMARY collects every step's).
    ASSERT_EQ(report_cmd("--summary " + quote(summary) + " -o /dev/null" + join(d.run.traces)), 0);
    std::string twice = read_file(summary);
    EXPECT_GT(twice.size(), md.size());
    EXPECT_EQ(twice.compare(0, md.size(), md), 0);
    // Options before the traces take one value each: the traces stay traces.
    EXPECT_EQ(report_cmd("--fail-on leak --pid " +
                             std::to_string(d.report["summary"]["pid"].get<uint64_t>()) +
                             " -o /dev/null" + join(d.run.traces),
                         &out),
              1)
        << out;
    // Without a failing gate, leaks are warnings.
    ASSERT_EQ(report_cmd("--github -o /dev/null" + join(d.run.traces), &out), 0);
    EXPECT_NE(out.find("::warning file="), std::string::npos) << out;
    EXPECT_EQ(out.find("::error"), std::string::npos) << out;
}

} // namespace
} // namespace gpuleak::e2e
