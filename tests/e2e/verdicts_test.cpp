// Iteration verdicts and likely-cause hints on loops with known behaviour
// (tests/scenarios/verdict_scenarios.cpp has the ground truth of each scenario).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "e2e_support.h"

namespace gpuleak::e2e {
namespace {

Json scenario(const std::string& name, const std::vector<std::string>& report_args = {},
              std::map<std::string, std::string> env = {}) {
    RunOptions options;
    options.env = std::move(env);
    RunResult r = run({Paths::app("verdict_scenarios"), name}, options);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.traces.size() != 1) {
        ADD_FAILURE() << name << ": expected one trace\n" << r.output;
        return Json::object();
    }
    return report(r.traces[0], report_args);
}

const Json& site(const Json& rep, const std::string& function) {
    static const Json none = Json::object();
    const Json* s = site_by_function(rep, function);
    EXPECT_NE(s, nullptr) << "no site " << function;
    return s ? *s : none;
}

std::vector<std::string> leaks(const Json& rep) {
    std::vector<std::string> out;
    for (const auto& s : rep["sites"])
        if (s["verdict"] == "leak") out.push_back(headline_function(s));
    return out;
}

void expect_rate(const Json& s, double bytes_per_iteration) {
    double got = s["growth_bytes_per_iteration"];
    EXPECT_NEAR(got, bytes_per_iteration, 0.05 * bytes_per_iteration) << s.dump(1);
}

TEST(Verdicts, LeakEveryIteration) {
    Json rep = scenario("leak_every_iteration");
    EXPECT_EQ(rep["iterations"]["source"], "inferred");
    EXPECT_EQ(rep["iterations"]["count"], 30);
    EXPECT_EQ(leaks(rep), std::vector<std::string>{"keep_output"});
    const Json& s = site(rep, "keep_output");
    expect_rate(s, 1000003);
    EXPECT_EQ(s["outlived_iteration"], 30);
    EXPECT_EQ(s["first_iteration"], 1);
    EXPECT_GT(s["confidence"].get<double>(), 0.95);
    // Leaks lead the report.
    EXPECT_EQ(headline_function(rep["sites"][0]), "keep_output");
    EXPECT_EQ(site(rep, "workspace")["verdict"], "transient");
    EXPECT_EQ(site(rep, "copy_input")["verdict"], "transient");
}

TEST(Verdicts, LeakEveryThirdIteration) {
    Json rep = scenario("leak_every_third");
    EXPECT_EQ(leaks(rep), std::vector<std::string>{"keep_every_third"});
    expect_rate(site(rep, "keep_every_third"), 1000000);
}

TEST(Verdicts, LeakUnderAnIfAtTheTopOfTheLoopIsPerIterationOfTheWholeLoop) {
    Json rep = scenario("leak_every_tenth_first");
    ASSERT_EQ(rep["loops"].size(), 1u) << rep["loops"].dump(1);
    EXPECT_EQ(rep["loops"][0]["iterations"], 300);
    EXPECT_EQ(leaks(rep), std::vector<std::string>{"keep_every_tenth"});
    expect_rate(site(rep, "keep_every_tenth"), 500000);
    EXPECT_EQ(site(rep, "keep_every_tenth")["first_iteration"], 1);
}

TEST(Verdicts, TwoSitesLeakingAtDifferentRates) {
    Json rep = scenario("two_rates");
    auto l = leaks(rep);
    std::sort(l.begin(), l.end());
    EXPECT_EQ(l, (std::vector<std::string>{"fast_leak", "slow_leak"}));
    expect_rate(site(rep, "fast_leak"), 1000000);
    expect_rate(site(rep, "slow_leak"), 1000000);
}

TEST(Verdicts, BoundedCacheIsNotALeak) {
    Json rep = scenario("lru_cache");
    EXPECT_TRUE(leaks(rep).empty());
    EXPECT_EQ(site(rep, "cache_insert")["verdict"], "retained");
}

TEST(Verdicts, GradientAccumulationSawtoothIsNotALeak) {
    Json rep = scenario("sawtooth");
    EXPECT_TRUE(leaks(rep).empty());
    EXPECT_EQ(site(rep, "accumulate_grad")["verdict"], "retained");
}

TEST(Verdicts, VariableKeptPastTheLoopIsRetained) {
    Json rep = scenario("kept_past_loop");
    EXPECT_TRUE(leaks(rep).empty());
    EXPECT_EQ(site(rep, "last_output")["verdict"], "retained");
}

TEST(Verdicts, GrowingSizesAreGrowthNotLeak) {
    Json rep = scenario("growing");
    EXPECT_TRUE(leaks(rep).empty());
    const Json& s = site(rep, "grow_buffer");
    EXPECT_EQ(s["verdict"], "growth");
    expect_rate(s, 100000);
}

TEST(Verdicts, ModelRebuiltPerFold) {
    Json rep = scenario("per_fold");
    auto l = leaks(rep);
    std::sort(l.begin(), l.end());
    EXPECT_EQ(l, (std::vector<std::string>{"build_encoder", "build_head"}));
    // Per iteration of its own loop, the fold loop (5 iterations, each running 6 batches).
    expect_rate(site(rep, "build_encoder"), 6000000.0);
    const Json& encoder_loop = rep["loops"][site(rep, "build_encoder")["loop"].get<size_t>()];
    EXPECT_EQ(encoder_loop["iterations"], 5) << encoder_loop.dump();
    const Json& batch_loop = rep["loops"][site(rep, "copy_input")["loop"].get<size_t>()];
    EXPECT_EQ(batch_loop["iterations"], 30) << batch_loop.dump();
    EXPECT_TRUE(has_hint(site(rep, "build_encoder")["hints"], "rebuilt per outer loop"))
        << rep["sites"].dump(1);
}

TEST(Verdicts, CleanLoopHasNoFalseLeak) {
    for (const char* name : {"clean", "lru_cache", "sawtooth", "kept_past_loop"}) {
        Json rep = scenario(name, {"--fail-on", "leak"});
        for (const auto& s : rep["sites"])
            EXPECT_NE(s["verdict"], "leak") << name << ": " << s.dump(1);
    }
}

// A thread started and joined in every iteration has no loop of its own: its sites are timed by
// the main loop, and all those threads' allocations of a site are counted together, so that one
// buffer kept by each of them is the leak it is in the program.
TEST(Verdicts, LeakInAThreadStartedPerIteration) {
    Json rep = scenario("thread_per_iteration");
    EXPECT_EQ(leaks(rep), std::vector<std::string>{"thread_result"}) << rep["sites"].dump(1);
    const Json& kept = site(rep, "thread_result");
    EXPECT_EQ(kept["loop"], rep["iterations"]["loop"]);
    expect_rate(kept, 600000);
    EXPECT_EQ(kept["outlived_iteration"], 30);
    // Freed inside the thread that made it: within the iteration, even the last one's, which is
    // freed after the program's last allocation.
    EXPECT_EQ(site(rep, "thread_scratch")["verdict"], "transient") << rep["sites"].dump(1);
}

TEST(Verdicts, BoundedResultsOfThreadsStartedPerIterationAreRetained) {
    Json rep = scenario("thread_per_iteration_bounded");
    EXPECT_TRUE(leaks(rep).empty()) << rep["sites"].dump(1);
    EXPECT_EQ(site(rep, "thread_result")["verdict"], "retained") << rep["sites"].dump(1);
    EXPECT_EQ(site(rep, "thread_scratch")["verdict"], "transient") << rep["sites"].dump(1);
}

// Workers started for each epoch, each with a loop of its own, keep a model replica made before
// that loop: judged per thread it is one buffer each, but the program grows by three per epoch.
// No stack shows the epochs (the thread that starts the workers allocates nothing): the rounds in
// which the workers are started are the loop.
TEST(Verdicts, ReplicasKeptByWorkersStartedPerEpochLeak) {
    Json rep = scenario("workers_per_epoch");
    EXPECT_EQ(leaks(rep), std::vector<std::string>{"worker_replica"}) << rep["sites"].dump(1);
    const Json& kept = site(rep, "worker_replica");
    const Json& rounds = rep["loops"][kept["loop"].get<size_t>()];
    EXPECT_EQ(rounds["source"], "threads") << rounds.dump();
    EXPECT_EQ(rounds["iterations"], 5) << rounds.dump();
    EXPECT_EQ(rounds["thread"], nullptr);
    expect_rate(kept, 3 * 2000000.0);
    EXPECT_EQ(kept["outlived_iteration"], 15);
    EXPECT_TRUE(has_hint(kept["hints"], "leaves 3 allocations from here behind")) << kept["hints"];
    // The workers' own loop bodies are judged in the workers' own loop.
    for (const char* name : {"copy_input", "workspace"}) {
        EXPECT_EQ(site(rep, name)["verdict"], "transient") << rep["sites"].dump(1);
        EXPECT_EQ(rep["loops"][site(rep, name)["loop"].get<size_t>()]["source"], "inferred");
    }
    // Not the main loop: the stacks show one.
    EXPECT_EQ(rep["iterations"]["source"], "inferred");
}

TEST(Verdicts, ReplicasOfWorkersStartedPerEpochFreedAfterTheNextEpochAreRetained) {
    Json rep = scenario("workers_per_epoch_bounded");
    EXPECT_TRUE(leaks(rep).empty()) << rep["sites"].dump(1);
    const Json& kept = site(rep, "worker_replica");
    EXPECT_EQ(kept["verdict"], "retained") << rep["sites"].dump(1);
    EXPECT_EQ(rep["loops"][kept["loop"].get<size_t>()]["source"], "threads");
}

TEST(Verdicts, LayersBuiltInALoopBeforeTrainingAreRetained) {
    Json rep = scenario("layers_then_training");
    EXPECT_EQ(leaks(rep), std::vector<std::string>{}) << rep["sites"].dump(1);
    const Json& layers = site(rep, "build_layer");
    EXPECT_EQ(layers["verdict"], "retained") << layers.dump(1);
    EXPECT_EQ(layers["live_count_at_teardown"], 6);
    EXPECT_TRUE(has_hint(layers["hints"], "frees nothing")) << layers.dump(1);
    EXPECT_EQ(site(rep, "copy_input")["verdict"], "transient");
}

TEST(Verdicts, WarmupSkipsTheFirstIterations) {
    Json rep = scenario("caching_growth", {"--warmup", "5"});
    EXPECT_EQ(rep["iterations"]["warmup"], 5);
    // The three segments of iterations 1-3 are warm-up; only the rare large one remains
    // interesting.
    EXPECT_TRUE(leaks(rep).empty());
}

// tests/scenarios/tail_call_scenarios.cpp, built at -O2: a step that allocates, then ends in a
// tail call its DWARF cannot name (through a vtable, or to a function that tail-calls on).
void expect_one_iteration_per_step(const std::string& scenario, const std::string& step,
                                   const std::string& tail_callee, double kept_per_step) {
    RunResult r = run({Paths::app("tail_call_scenarios"), scenario});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    Json rep = report(r.traces[0]);
    auto named = [](const Json& site, const std::string& part) {
        for (const auto& f : site["frames"])
            if (f["function"].is_string() &&
                f["function"].get<std::string>().find(part) != std::string::npos)
                return true;
        return false;
    };
    const Json* kept = nullptr;
    bool tail_called = false;
    for (const auto& s : rep["sites"]) {
        if (named(s, step) && s["largest_bytes"] == kept_per_step)
            kept = &s;
        else
            EXPECT_EQ(s["verdict"], "transient") << s.dump(1);
        tail_called = tail_called || (named(s, tail_callee) && !named(s, step));
    }
    ASSERT_NE(kept, nullptr) << rep["sites"].dump(1);
    if (!tail_called)
        GTEST_SKIP() << "this build kept " << step << "'s frame under " << tail_callee
                     << " (no tail call was compiled), so there is nothing to test";
    ASSERT_EQ(rep["loops"].size(), 1u) << rep["loops"].dump(1);
    EXPECT_EQ(rep["loops"][0]["iterations"], 40);
    EXPECT_EQ((*kept)["verdict"], "leak") << kept->dump(1);
    expect_rate(*kept, kept_per_step);
}

TEST(Verdicts, AStepEndingInAVirtualCallIsOneIteration) {
    expect_one_iteration_per_step("virtual_tail", "virtual_step", "::forward(int)", 4096);
}

TEST(Verdicts, AStepEndingInAChainOfTailCallsIsOneIteration) {
    expect_one_iteration_per_step("chain_tail", "chain_step", "apply(int)", 8192);
}

TEST(Verdicts, AStepCalledThroughAPointerThatEndsInAChainOfTailCallsIsOneIteration) {
    expect_one_iteration_per_step("chain_through_pointer", "chain_step", "apply(int)", 8192);
}

// Its first allocation is made by an inlined body that starts at the step's first byte, where the
// step stands (one place for all of that body's calls): its tail callees are looked up by a
// return address inside it.
TEST(Verdicts, AStepCalledThroughAPointerThatBeginsInlinedAndEndsInATailCallIsOneIteration) {
    expect_one_iteration_per_step("inlined_first", "inlined_first_step", "apply(int)", 16384);
}

// The line of tests/scenarios/optimized_scenarios.cpp that ends in `// MARK`.
int optimized_scenarios_line(const std::string& mark) {
    std::ifstream in(Paths::source() + "/tests/scenarios/optimized_scenarios.cpp");
    std::string text;
    for (int line = 1; std::getline(in, text); ++line)
        if (text.ends_with("// " + mark)) return line;
    ADD_FAILURE() << "no line marked " << mark;
    return -1;
}

// The report of tests/scenarios/optimized_scenarios.cpp's `scenario` (an empty object where it
// failed).
Json optimized_scenario(const std::string& scenario) {
    RunResult r = run({Paths::app("optimized_scenarios"), scenario});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.exit_code != 0 || r.traces.size() != 1) {
        ADD_FAILURE() << scenario << ": expected one trace\n" << r.output;
        return Json::object();
    }
    return report(r.traces[0]);
}

// A site's name is the function as its source names it: GCC's clones of one helper (one per
// constant it is called with, at -O3) are one function, so the callers' lines tell the sites apart.
TEST(SiteNames, ClonesOfOneFunctionAreNamedByTheirCallers) {
    Json rep = optimized_scenario("cloned_helper");
    ASSERT_TRUE(rep.contains("sites")) << rep.dump(1);
    bool cloned = false;
    for (const auto& s : rep["sites"])
        for (const auto& f : s["frames"])
            cloned = cloned || (f["function"].is_string() && f["function"].get<std::string>().find(
                                                                 " [clone .") != std::string::npos);
    if (!cloned)
        GTEST_SKIP() << "this compiler made no clone of forward(), so there is nothing to test";
    const std::string kept = ":" + std::to_string(optimized_scenarios_line("OUTPUT"));
    const std::string freed = ":" + std::to_string(optimized_scenarios_line("ACTIVATION"));
    int leaks = 0, transients = 0;
    for (const auto& s : rep["sites"]) {
        const std::string label = s["label"];
        EXPECT_EQ(label.find("[clone"), std::string::npos) << label;
        if (s["verdict"] == "leak") {
            ++leaks;
            EXPECT_TRUE(label.ends_with(kept)) << label;
        } else if (s["verdict"] == "transient") {
            ++transients;
            EXPECT_TRUE(label.ends_with(freed)) << label;
        }
    }
    EXPECT_EQ(leaks, 1) << rep["sites"].dump(1);
    EXPECT_EQ(transients, 1) << rep["sites"].dump(1);
    ASSERT_EQ(rep["loops"].size(), 1u) << rep["loops"].dump(1);
    EXPECT_EQ(rep["loops"][0]["iterations"], 16);
    EXPECT_EQ(rep["loops"][0]["function"].get<std::string>().find("[clone"), std::string::npos);
}

// GCC splits a function's slow path off and inlines it back: DWARF shows Pool::get inlined into
// Pool::get. That is one call of the program's, named once.
TEST(SiteNames, AFunctionInlinedIntoItselfIsOneCall) {
    Json rep = optimized_scenario("split_pool");
    ASSERT_TRUE(rep.contains("sites")) << rep.dump(1);
    bool doubled = false;
    for (const auto& s : rep["sites"]) {
        const Json& frames = s["frames"];
        for (size_t i = 1; i < frames.size(); ++i)
            doubled = doubled || (frames[i - 1]["inlined"] == true &&
                                  frames[i]["function"] == frames[i - 1]["function"] &&
                                  frames[i]["function"].get<std::string>().ends_with("Pool::get"));
    }
    if (!doubled)
        GTEST_SKIP() << "this compiler did not inline Pool::get into itself: nothing to test";
    const std::string taken = ":" + std::to_string(optimized_scenarios_line("TAKEN"));
    const std::string reused = ":" + std::to_string(optimized_scenarios_line("REUSED"));
    int leaks = 0, retained = 0;
    for (const auto& s : rep["sites"]) {
        const std::string label = s["label"];
        EXPECT_EQ(label.find("Pool::get"), label.rfind("Pool::get")) << label;
        if (s["verdict"] == "leak") {
            ++leaks;
            EXPECT_TRUE(label.ends_with("split_pool" + taken)) << label;
        } else if (s["verdict"] == "retained") {
            ++retained;
            EXPECT_TRUE(label.ends_with("split_pool" + reused)) << label;
        }
    }
    EXPECT_EQ(leaks, 1) << rep["sites"].dump(1);
    EXPECT_EQ(retained, 1) << rep["sites"].dump(1);
}

// Two calls on one line: the sites differ only in the column of the call in one_line(), whose
// text names each (DWARF gives the column of a call).
TEST(SiteNames, TwoCallsOnOneLineAreNamedByTheirText) {
    Json rep = optimized_scenario("one_line");
    ASSERT_TRUE(rep.contains("sites")) << rep.dump(1);
    const std::string line = std::to_string(optimized_scenarios_line("ONE LINE"));
    int leaks = 0, transients = 0;
    for (const auto& s : rep["sites"]) {
        const std::string label = s["label"];
        EXPECT_EQ(label.find("(site #"), std::string::npos) << label;
        if (s["verdict"] == "leak") {
            ++leaks;
            EXPECT_TRUE(label.ends_with(
                ", call forward(1 << 18) in (anonymous namespace)::one_line:" + line))
                << label;
        } else if (s["verdict"] == "transient") {
            ++transients;
            EXPECT_NE(label.find("forward(1 << 20)"), std::string::npos) << label;
        }
    }
    EXPECT_EQ(leaks, 1) << rep["sites"].dump(1);
    EXPECT_EQ(transients, 1) << rep["sites"].dump(1);
}

TEST(Hints, ForwardPassRetained) {
    Json rep = scenario("forward_leak");
    EXPECT_TRUE(has_hint(site(rep, "forward")["hints"], "forward pass"))
        << site(rep, "forward").dump(1);
    EXPECT_TRUE(has_hint(site(rep, "forward")["hints"], ".detach()"));
    // The same leak outside a forward pass gets no such hint.
    Json plain = scenario("leak_every_iteration");
    EXPECT_FALSE(has_hint(site(plain, "keep_output")["hints"], "forward pass"));
}

TEST(Hints, TorchLoadOnDeviceZeroInAnotherRank) {
    Json rep = scenario("torch_load_rank", {}, {{"LOCAL_RANK", "1"}});
    EXPECT_TRUE(has_hint(site(rep, "torch_load")["hints"], "map_location"))
        << site(rep, "torch_load").dump(1);
    Json rank0 = scenario("torch_load_rank", {}, {{"LOCAL_RANK", "0"}});
    EXPECT_FALSE(has_hint(site(rank0, "torch_load")["hints"], "map_location"));
}

TEST(Hints, EvaluationWithoutNoGrad) {
    Json rep = scenario("eval_no_grad");
    EXPECT_TRUE(has_hint(rep["hints"], "no_grad")) << rep["hints"].dump();
    Json train_only = scenario("forward_leak");
    EXPECT_FALSE(has_hint(train_only["hints"], "no_grad"));
}

TEST(Hints, CachingAllocatorGrowth) {
    Json rep = scenario("caching_growth");
    bool found = false;
    for (const auto& s : rep["sites"])
        found = found || has_hint(s["hints"], "expandable_segments");
    EXPECT_TRUE(found) << rep["sites"].dump(1);
}

// Segments are asked for by whichever tensor found the cache full: the leak's line is not known.
TEST(Hints, LeakOfCachingAllocatorSegmentsSendsToPerTensor) {
    Json rep = scenario("caching_leak");
    const Json* leak = nullptr;
    for (const auto& s : rep["sites"])
        if (s["verdict"] == "leak") leak = &s;
    ASSERT_NE(leak, nullptr) << rep["sites"].dump(1);
    EXPECT_TRUE(has_hint((*leak)["hints"], "--per-tensor")) << leak->dump(1);
    Json plain = scenario("leak_every_iteration");
    EXPECT_FALSE(has_hint(site(plain, "keep_output")["hints"], "--per-tensor"));
}

TEST(Hints, OversizedRequest) {
    RunOptions options;
    options.env["FAKECUDA_CAPACITY"] = "67108864";
    RunResult r = run({Paths::app("scenario_oom")}, options);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Json rep = report(r.traces.at(0));
    ASSERT_EQ(rep["ooms"].size(), 1u);
    EXPECT_TRUE(has_hint(rep["ooms"][0]["hints"], "65x the typical allocation"))
        << rep["ooms"].dump(1);
}

TEST(Gates, ExitCodesAndOneLinePerGate) {
    RunResult r = run({Paths::app("verdict_scenarios"), "leak_every_iteration"}, {});
    ASSERT_EQ(r.traces.size(), 1u);
    std::string out;
    std::string base = "'" + Paths::report() + "' '" + r.traces[0] + "' --format json >/dev/null ";
    EXPECT_EQ(shell(base + "--fail-on leak", &out), 1);
    EXPECT_NE(out.find("--fail-on leak: FAIL (1 leaking site: keep_output"), std::string::npos)
        << out;
    EXPECT_EQ(shell(base + "--max-growth 2MiB/iter", &out), 0);
    EXPECT_NE(out.find("PASS"), std::string::npos) << out;
    EXPECT_EQ(shell(base + "--max-growth 500KiB/iter", &out), 1);
    EXPECT_EQ(shell(base + "--max-peak 1GiB --max-live-end 40MiB", &out), 0) << out;
    EXPECT_EQ(shell(base + "--max-live-end 10MiB", &out), 1) << out;
    EXPECT_EQ(shell(base + "--max-peak lots", &out), 2) << out;
    RunResult clean = run({Paths::app("verdict_scenarios"), "clean"}, {});
    EXPECT_EQ(
        shell("'" + Paths::report() + "' '" + clean.traces.at(0) + "' --fail-on leak >/dev/null",
              &out),
        0)
        << out;
}

TEST(Iterations, ExplicitSiteAndMarkers) {
    RunResult r = run({Paths::app("verdict_scenarios"), "per_fold"}, {});
    ASSERT_EQ(r.traces.size(), 1u);
    // Folds as iterations: the model leaks every iteration.
    // The line of the fold loop's first allocation, looked up so the test survives edits of the
    // source.
    std::ifstream source(Paths::source() + "/tests/scenarios/verdict_scenarios.cpp");
    std::string text;
    int line = 0, fold_line = 0;
    while (std::getline(source, text) && !fold_line) {
        ++line;
        if (text.find("g_kept.push_back(build_encoder());") != std::string::npos) fold_line = line;
    }
    ASSERT_GT(fold_line, 0);
    Json rep = report(r.traces[0],
                      {"--iteration-site", "verdict_scenarios.cpp:" + std::to_string(fold_line)});
    EXPECT_EQ(rep["iterations"]["source"], "site");
    EXPECT_EQ(rep["iterations"]["count"], 5);
    expect_rate(site(rep, "build_encoder"), 6000000);
}

} // namespace
} // namespace gpuleak::e2e
