// The field reports' leak patterns in Python (tests/python_scenarios/seeds.py), traced through
// ctypes into the fake CUDA runtime on every CPython present: the report's leaking sites must be
// headed by exactly the lines marked `# LEAK` (file, function and line), with the Python frames
// merged into the native stack.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "e2e_support.h"

namespace gpuleak::e2e {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> interpreters() {
    std::vector<std::string> out;
    for (const char* minor : {"3.9", "3.10", "3.11", "3.12", "3.13", "3.14"}) {
        std::string found;
        std::error_code ec;
        for (const auto& dir : fs::directory_iterator("/root/.pyenv/versions", ec)) {
            std::string name = dir.path().filename().string();
            if (name.rfind(std::string(minor) + ".", 0) == 0 &&
                fs::exists(dir.path() / "bin" / ("python" + std::string(minor))))
                found = (dir.path() / "bin" / ("python" + std::string(minor))).string();
        }
        out.push_back(found.empty() ? std::string("absent:") + minor : found);
    }
    out.push_back(fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "absent:debian");
    return out;
}

std::string seeds_path() {
    return Paths::source() + "/tests/python_scenarios/seeds.py";
}

// (function, line) of every `# LEAK` line inside the scenario function `scenario` or a function
// nested in it (by its own name: CPython before 3.11 records no qualified names).
std::set<std::pair<std::string, int>> marked_lines(const std::string& scenario) {
    std::ifstream in(seeds_path());
    std::string text;
    std::vector<std::pair<size_t, std::string>> defs; // (indentation, name), outermost first
    std::set<std::pair<std::string, int>> out;
    for (int line = 1; std::getline(in, text); ++line) {
        size_t indent = text.find_first_not_of(' ');
        if (indent == std::string::npos) continue;
        while (!defs.empty() && defs.back().first >= indent && text[indent] != '#')
            defs.pop_back();
        for (const char* def : {"def ", "async def "}) {
            const size_t n = std::string(def).size();
            if (text.compare(indent, n, def) == 0)
                defs.push_back({indent, text.substr(indent + n, text.find('(') - indent - n)});
        }
        if (defs.empty() || defs.front().second != scenario ||
            text.find("# LEAK") == std::string::npos)
            continue;
        out.insert({defs.back().second, line});
    }
    return out;
}

// The scenario's one trace; empty (and the test failed) without one.
std::string run_seed_trace(const std::string& python, const std::string& scenario,
                           std::map<std::string, std::string> env = {}) {
    RunOptions options;
    options.env = std::move(env);
    options.env["LD_LIBRARY_PATH"] = Paths::fake_dir();
    options.env["PYTHONPATH"] = Paths::source() + "/tests/python_scenarios/site-packages";
    options.env["PYTHONDONTWRITEBYTECODE"] = "1";
    RunResult r = run({python, seeds_path(), scenario}, options);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.traces.size() != 1) {
        ADD_FAILURE() << scenario << ": no trace\n" << r.output;
        return "";
    }
    return r.traces[0];
}

Json run_seed(const std::string& python, const std::string& scenario,
              std::map<std::string, std::string> env = {}) {
    std::string trace = run_seed_trace(python, scenario, std::move(env));
    return trace.empty() ? Json::object() : report(trace);
}

// The function's own name: "threads.<locals>.worker" in 3.11+, "worker" before.
std::string last_name(const std::string& qualname) {
    size_t dot = qualname.rfind('.');
    return dot == std::string::npos ? qualname : qualname.substr(dot + 1);
}

// `text` in the text report of `trace`.
bool text_report_says(const std::string& trace, const std::string& text) {
    std::string out;
    EXPECT_EQ(shell(Paths::report() + " " + trace, &out), 0) << out;
    return out.find(text) != std::string::npos;
}

std::pair<std::string, int> python_headline(const Json& site) {
    const Json& h = site["headline"];
    if (h.is_null() || h["kind"] != "python") return {"", 0};
    EXPECT_EQ(fs::path(h["file"].get<std::string>()).filename(), "seeds.py") << h.dump();
    return {last_name(h["function"]), h["line"]};
}

std::set<std::pair<std::string, int>> leak_headlines(const Json& rep) {
    std::set<std::pair<std::string, int>> out;
    for (const auto& s : rep["sites"])
        if (s["verdict"] == "leak") out.insert(python_headline(s));
    return out;
}

class PythonSeeds : public testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (GetParam().rfind("absent:", 0) == 0)
            GTEST_SKIP() << "Python " << GetParam().substr(7) << " is not installed here";
    }
};

TEST_P(PythonSeeds, AppendOutputLeaks) {
    Json rep = run_seed(GetParam(), "append_output");
    EXPECT_EQ(leak_headlines(rep), marked_lines("append_output")) << rep["sites"].dump(1);
    // The report quotes the line itself, read from the script.
    for (const auto& s : rep["sites"]) {
        if (s["verdict"] != "leak") continue;
        EXPECT_EQ(s["headline"]["source"], "output = model(x)  # LEAK");
    }
}

// Three sites on one line: the input made there, and the model's two layers run from it. Each is
// named by the first frame inside at which it differs from the others (the layer's line in
// forward), not by a site number.
TEST_P(PythonSeeds, SitesOfOneLineAreNamedByWhereTheyDiffer) {
    Json rep = run_seed(GetParam(), "append_output_of_new_input");
    EXPECT_EQ(leak_headlines(rep), marked_lines("append_output_of_new_input"))
        << rep["sites"].dump(1);
    std::set<std::string> labels;
    for (const auto& s : rep["sites"]) {
        if (python_headline(s).first != "append_output_of_new_input") continue;
        const std::string label = s["label"].get<std::string>();
        EXPECT_EQ(label.find("(site #"), std::string::npos) << label;
        labels.insert(label.substr(label.find(" via ")));
    }
    EXPECT_EQ(labels.size(), 3u) << rep["sites"].dump(1);
    EXPECT_EQ(labels.count(" via empty (__init__.py:103)"), 1u) << rep["sites"].dump(1);
}

// A loop whose only allocating line calls the model, which makes two tensors: between them the
// model's forward goes back to its first line, called again by the loop (it has no loop of its
// own). Before, no loop was found, and nothing was judged.
TEST_P(PythonSeeds, ALoopWhoseOnlyAllocationsAreOneModelCallIsFound) {
    Json kept = run_seed(GetParam(), "append_output_of_one_input");
    EXPECT_EQ(leak_headlines(kept), marked_lines("append_output_of_one_input"))
        << kept["loops"].dump(1) << kept["sites"].dump(1);
    ASSERT_EQ(kept["loops"].size(), 1u) << kept["loops"].dump(1);
    EXPECT_EQ(kept["loops"][0]["iterations"], 12) << kept["loops"].dump(1); // seeds' ITERATIONS
    Json evaluated = run_seed(GetParam(), "evaluate_one_input");
    EXPECT_TRUE(leak_headlines(evaluated).empty()) << evaluated["sites"].dump(1);
    int judged = 0;
    for (const auto& s : evaluated["sites"]) {
        if (python_headline(s).first != "evaluate_one_input") continue;
        if (s["label"].get<std::string>().find("via Model.forward") == std::string::npos &&
            s["label"].get<std::string>().find("via forward") == std::string::npos)
            continue;
        ++judged;
        EXPECT_EQ(s["verdict"], "transient") << s.dump(1);
    }
    EXPECT_EQ(judged, 2) << evaluated["sites"].dump(1);
}

// A framework's fit loop (in site-packages) calls the program's training_step once per batch, and
// no frame of the program further out is in a loop: the framework's loop is the one its steps are
// judged in. Before, no loop was found, and nothing was judged.
TEST_P(PythonSeeds, AFrameworksFitLoopIsTheLoopOfTheStepsItCalls) {
    Json kept = run_seed(GetParam(), "fit_by_a_framework");
    EXPECT_EQ(leak_headlines(kept), marked_lines("fit_by_a_framework")) << kept["sites"].dump(1);
    ASSERT_EQ(kept["loops"].size(), 1u) << kept["loops"].dump(1);
    EXPECT_EQ(fs::path(kept["loops"][0]["file"].get<std::string>()).filename(), "fake_trainer.py");
    // Named by its qualified name, dots and all (a C function's dot starts a clone's suffix);
    // before 3.11 code objects have no qualified name.
    const Json& fit = kept["loops"][0]["function"];
    EXPECT_TRUE(fit == "Trainer.fit" || fit == "fit") << fit;
    EXPECT_TRUE(text_report_says(run_seed_trace(GetParam(), "fit_by_a_framework"),
                                 "(in " + fit.get<std::string>() + "), 24 iterations"));
    EXPECT_EQ(kept["loops"][0]["iterations"], 24) << kept["loops"].dump(1); // 3 epochs of 8
    Json released = run_seed(GetParam(), "fit_by_a_framework_released");
    EXPECT_TRUE(leak_headlines(released).empty()) << released["sites"].dump(1);
    for (const auto& s : released["sites"])
        EXPECT_NE(s["verdict"], "none") << s.dump(1);
}

// Outputs kept only from the last quarter of the run on: the leak begins late, and is one.
TEST_P(PythonSeeds, OutputsKeptOnlyLateInTheRunLeak) {
    Json rep = run_seed(GetParam(), "outputs_kept_late");
    EXPECT_EQ(leak_headlines(rep), marked_lines("outputs_kept_late")) << rep["sites"].dump(1);
    for (const auto& s : rep["sites"]) {
        if (s["verdict"] != "leak") continue;
        // Per iteration of the rise, not averaged over the flat part before it.
        EXPECT_GT(s["growth_bytes_per_iteration"].get<double>(), 200000) << s.dump(1);
    }
}

// A step's loss summed over micro-batches by sum() over a generator: the generator's loop is the
// steps' (a new generator each step looks the same as the last one's next step), the additions
// that sum() makes at the step's own line between the generator's steps are timed by it, and the
// step's line is one place however CPython specialized the call to sum() (3.11 stops at its
// PRECALL once warmed up; a stripped interpreter's static functions are the interpreter's).
// Before, 3.11 found a second, 2-iteration loop at the step's line and split every site in two
// ("(site #N)"); Debian's python3 found no loop; and on every version the kept additions read
// `retained`.
TEST_P(PythonSeeds, LossesSummedOverMicroBatchesByAGenerator) {
    Json summed = run_seed(GetParam(), "micro_batches_summed");
    EXPECT_TRUE(leak_headlines(summed).empty()) << summed["sites"].dump(1);
    ASSERT_EQ(summed["loops"].size(), 1u) << summed["loops"].dump(1);
    EXPECT_EQ(summed["loops"][0]["iterations"], 48) << summed["loops"].dump(1); // 12 steps of 4
    int lines = 0;
    for (const auto& s : summed["sites"]) {
        if (python_headline(s).second == 0 || python_headline(s).first == "<module>") continue;
        ++lines;
        EXPECT_EQ(s["label"].get<std::string>().find("(site #"), std::string::npos) << s.dump(1);
        EXPECT_NE(s["verdict"], "none") << s.dump(1);
    }
    EXPECT_EQ(lines, 4) << summed["sites"].dump(1); // the input, two layers, the additions

    Json kept = run_seed(GetParam(), "micro_batch_losses_kept");
    const auto marked = marked_lines("micro_batch_losses_kept");
    ASSERT_EQ(marked.size(), 1u);
    const int line = marked.begin()->second;
    EXPECT_EQ(leak_headlines(kept), (std::set<std::pair<std::string, int>>{
                                        {"<genexpr>", line}, {"micro_batch_losses_kept", line}}))
        << kept["sites"].dump(1);
    int additions = 0;
    for (const auto& s : kept["sites"]) {
        if (python_headline(s) != std::make_pair(std::string("micro_batch_losses_kept"), line))
            continue;
        ++additions;
        EXPECT_EQ(s["verdict"], "leak") << s.dump(1);
    }
    EXPECT_EQ(additions, 1) << kept["sites"].dump(1);
}

// The interpreter's minor version (11 for 3.11).
int python_minor(const std::string& interpreter) {
    std::string out;
    EXPECT_EQ(shell(interpreter + " -c 'import sys; print(sys.version_info[1])'", &out), 0);
    return std::atoi(out.c_str());
}

// Sites that differ only within one line (two calls on it) are named by the call's text, which
// 3.11+ line tables give (co_positions), and by its column where the texts are alike. Before,
// and before 3.11 still, they were "(site #N)".
TEST_P(PythonSeeds, TwoCallsOnOneLineAreNamedByTheirText) {
    Json rep = run_seed(GetParam(), "two_calls_on_one_line");
    const auto marked = marked_lines("two_calls_on_one_line");
    ASSERT_EQ(marked.size(), 1u);
    EXPECT_EQ(leak_headlines(rep), marked) << rep["sites"].dump(1);
    if (python_minor(GetParam()) < 11)
        GTEST_SKIP() << "no columns in the line tables before 3.11: sites are named by number";
    std::map<std::string, int> named;
    for (const auto& s : rep["sites"]) {
        if (python_headline(s).first != "two_calls_on_one_line") continue;
        const std::string label = s["label"];
        EXPECT_EQ(label.find("(site #"), std::string::npos) << label;
        for (const char* call :
             {", call model(x)", ", call model(y)", ", call torch.empty(BATCH) at column"})
            if (label.find(call) != std::string::npos) ++named[call];
        if (label.find(", call model(x)") != std::string::npos) {
            EXPECT_EQ(s["verdict"], "leak") << s.dump(1);
        }
        if (label.find(", call model(y)") != std::string::npos) {
            EXPECT_NE(s["verdict"], "leak") << s.dump(1);
        }
    }
    // Two layers per model call; two inputs.
    EXPECT_EQ(named, (std::map<std::string, int>{{", call model(x)", 2},
                                                 {", call model(y)", 2},
                                                 {", call torch.empty(BATCH) at column", 2}}))
        << rep["sites"].dump(1);

    // A call too long to quote is cut between characters, never inside one (the report is JSON,
    // which report() parses).
    Json long_calls = run_seed(GetParam(), "long_calls_on_one_line");
    int cut = 0;
    for (const auto& s : long_calls["sites"]) {
        const std::string label = s["label"];
        if (label.find(", call tagged(model, \"a\xc3\xa9") == std::string::npos) continue;
        ++cut;
        EXPECT_NE(label.find("\xc3\xa9... in long_calls_on_one_line:"), std::string::npos) << label;
        if (label.find("via Model.forward") != std::string::npos) {
            EXPECT_EQ(s["verdict"], "leak") << s.dump(1);
        }
    }
    EXPECT_EQ(cut, 3) << long_calls["sites"].dump(1); // the input and two layers
}

// map() feeding a lambda from a generator expression, in no loop of the program's: the
// generator's steps alternate with the lambda's calls, so it never allocates twice in a row.
// Resumed, it takes its next step; the lambda is timed by the generator's loop, run from the same
// statement. Before, no loop was found and every site read `none`.
TEST_P(PythonSeeds, AMapOverAGeneratorIsTheGeneratorsLoop) {
    Json kept = run_seed(GetParam(), "mapped_over_a_generator");
    const auto marked = marked_lines("mapped_over_a_generator");
    ASSERT_EQ(marked.size(), 1u);
    ASSERT_EQ(kept["loops"].size(), 1u) << kept["loops"].dump(1);
    EXPECT_EQ(kept["loops"][0]["iterations"], 12) << kept["loops"].dump(1); // seeds' ITERATIONS
    std::set<std::pair<std::string, int>> leaks = leak_headlines(kept);
    EXPECT_EQ(leaks, (std::set<std::pair<std::string, int>>{{"<lambda>", marked.begin()->second}}))
        << kept["sites"].dump(1);
    Json items = run_seed(GetParam(), "mapped_over_a_generator_items");
    EXPECT_TRUE(leak_headlines(items).empty()) << items["sites"].dump(1);
    for (const auto& s : items["sites"]) {
        if (python_headline(s).first != "<lambda>") continue;
        EXPECT_EQ(s["verdict"], "transient") << s.dump(1);
    }
}

TEST_P(PythonSeeds, AppendItemDoesNotLeak) {
    EXPECT_TRUE(leak_headlines(run_seed(GetParam(), "append_item")).empty());
}

TEST_P(PythonSeeds, LossSumKeepsTheGraphChain) {
    Json rep = run_seed(GetParam(), "loss_sum");
    EXPECT_EQ(leak_headlines(rep), marked_lines("loss_sum")) << rep["sites"].dump(1);
}

TEST_P(PythonSeeds, VariableUsedAfterTheLoopIsBounded) {
    Json rep = run_seed(GetParam(), "kept_past_loop");
    EXPECT_TRUE(leak_headlines(rep).empty()) << rep["sites"].dump(1);
}

TEST_P(PythonSeeds, ModelRebuiltPerFold) {
    Json rep = run_seed(GetParam(), "per_fold");
    EXPECT_EQ(leak_headlines(rep), marked_lines("per_fold")) << rep["sites"].dump(1);
}

TEST_P(PythonSeeds, EvaluationKeepsGraphsUnlessDetached) {
    Json rep = run_seed(GetParam(), "evaluate");
    EXPECT_EQ(leak_headlines(rep), marked_lines("evaluate")) << rep["sites"].dump(1);
    EXPECT_TRUE(leak_headlines(run_seed(GetParam(), "evaluate_detached")).empty());
}

// Workers started per epoch keep what they make before their own loop: the rounds of threads are
// the loop that shows the leak (analysis/thread_rounds.h).
TEST_P(PythonSeeds, ReplicasOfWorkersStartedPerEpochLeak) {
    Json rep = run_seed(GetParam(), "workers_per_epoch");
    EXPECT_EQ(leak_headlines(rep), marked_lines("workers_per_epoch")) << rep["sites"].dump(1);
    for (const auto& s : rep["sites"]) {
        if (s["verdict"] != "leak") continue;
        EXPECT_EQ(rep["loops"][s["loop"].get<size_t>()]["iterations"], 5) << rep["loops"];
    }
    Json released = run_seed(GetParam(), "workers_per_epoch_released");
    EXPECT_TRUE(leak_headlines(released).empty()) << released["sites"].dump(1);
}

// A pool per epoch whose worker returns tensors: kept for good they leak; released after each
// epoch they do not, although the last epoch's are still held when the program exits (the workers
// of the earlier epochs show what the last one would have done).
TEST_P(PythonSeeds, PoolPerEpochLeaksOnlyWhatIsKept) {
    Json rep = run_seed(GetParam(), "pool_per_epoch");
    EXPECT_EQ(leak_headlines(rep), marked_lines("pool_per_epoch")) << rep["sites"].dump(1);
    Json released = run_seed(GetParam(), "pool_per_epoch_released");
    EXPECT_TRUE(leak_headlines(released).empty()) << released["sites"].dump(1);
}

TEST_P(PythonSeeds, WrongBatchSizeRunsOutOfMemory) {
    Json rep = run_seed(GetParam(), "wrong_batch_size", {{"FAKECUDA_CAPACITY", "41943040"}});
    ASSERT_EQ(rep["ooms"].size(), 1u) << rep.dump(1);
    const Json* site = site_by_id(rep, rep["ooms"][0]["site"]);
    ASSERT_NE(site, nullptr);
    std::set<std::pair<std::string, int>> got{python_headline(*site)};
    EXPECT_EQ(got, marked_lines("wrong_batch_size"));
    EXPECT_EQ(rep["ooms"][0]["requested_bytes"], 65u << 20);
}

// The leak grows through its loop and then stays flat while a second loop runs: still a leak.
// The steps that validate go back to the validation call, the others to the step's first line:
// one training loop of every step (not a second one of the validating steps), the validation's
// own loop inside it, and the kept losses a leak per step.
TEST_P(PythonSeeds, ValidationCalledFirstInSomeStepsIsPartOfTheTrainingLoop) {
    Json rep = run_seed(GetParam(), "validated_every_few_steps");
    EXPECT_EQ(leak_headlines(rep), marked_lines("validated_every_few_steps"))
        << rep["sites"].dump(1);
    std::multiset<int> iterations;
    for (const auto& l : rep["loops"])
        if (l["function"] == "validated_every_few_steps")
            iterations.insert(l["iterations"].get<int>());
    EXPECT_EQ(iterations, (std::multiset<int>{24})) << rep["loops"].dump(1);
}

TEST_P(PythonSeeds, LeakInTheFirstOfTwoLoops) {
    Json rep = run_seed(GetParam(), "train_then_fixed_loop");
    EXPECT_EQ(leak_headlines(rep), marked_lines("train_then_fixed_loop")) << rep["sites"].dump(1);
    EXPECT_GE(rep["loops"].size(), 2u) << rep["loops"].dump(1);
}

// What is kept to the end by `scenario` is no leak: the site holding `count` allocations then,
// headed by `function`, is retained with a hint that says `why`.
void expect_retained_not_leak(const std::string& python, const std::string& scenario, int count,
                              const std::string& function, const std::string& why) {
    Json rep = run_seed(python, scenario);
    EXPECT_EQ(leak_headlines(rep), (std::set<std::pair<std::string, int>>{}))
        << rep["sites"].dump(1);
    const Json* kept = nullptr;
    for (const auto& s : rep["sites"])
        if (python_headline(s).first == function && s["live_count_at_teardown"] == count) kept = &s;
    ASSERT_NE(kept, nullptr) << rep["sites"].dump(1);
    EXPECT_EQ((*kept)["verdict"], "retained") << kept->dump(1);
    EXPECT_TRUE(has_hint((*kept)["hints"], why)) << kept->dump(1);
}

// Built in a loop (a comprehension: a function of its own before 3.12), kept, then trained with.
TEST_P(PythonSeeds, BlocksBuiltInALoopBeforeTrainingAreNoLeak) {
    expect_retained_not_leak(GetParam(), "layers_then_training", 6, "__init__", "frees nothing");
}

// The same blocks freed when the function that trained them returns, before another phase of the
// program: their rise and release were the model, no accumulation (which they read as before).
TEST_P(PythonSeeds, BlocksBuiltTrainedAndFreedByAFunctionAreNoAccumulation) {
    Json rep = run_seed(GetParam(), "trained_in_a_function");
    int built = 0;
    for (const auto& s : rep["sites"]) {
        EXPECT_NE(s["verdict"], "leak") << s.dump(1);
        EXPECT_NE(s["verdict"], "accumulation") << s.dump(1);
        built += python_headline(s).first == "__init__" && has_hint(s["hints"], "frees nothing");
    }
    EXPECT_EQ(built, 1) << rep["sites"].dump(1);
}

// The library's loop inside one call of a line that is in no loop (model.cuda()): bounded by it.
TEST_P(PythonSeeds, ParametersMovedToTheDeviceByOneCallAreNoLeak) {
    expect_retained_not_leak(GetParam(), "model_to_device", 8, "model_to_device", "one call");
}

TEST_P(PythonSeeds, OutputsKeptInTheSecondOfTwoEvaluations) {
    Json rep = run_seed(GetParam(), "items_then_outputs");
    EXPECT_EQ(leak_headlines(rep), marked_lines("items_then_outputs")) << rep["sites"].dump(1);
}

// Four threads churning at once: every allocation is freed in its own thread's iteration.
TEST_P(PythonSeeds, ConcurrentChurnInThreadsIsTransient) {
    Json rep = run_seed(GetParam(), "threads_churn");
    int workers = 0;
    for (const auto& s : rep["sites"]) {
        if (last_name(s["headline"]["function"]) != "worker") continue;
        ++workers;
        EXPECT_EQ(s["verdict"], "transient") << s.dump(1);
        // Threads that end before the next starts may share a recording slot, so not always 4.
        EXPECT_GE(s["loop_threads"], 1) << s.dump(1);
    }
    EXPECT_EQ(workers, 2) << rep["sites"].dump(1);
}

TEST_P(PythonSeeds, LeakInOneWorkerThread) {
    Json rep = run_seed(GetParam(), "leaky_worker_thread");
    EXPECT_EQ(leak_headlines(rep), marked_lines("leaky_worker_thread")) << rep["sites"].dump(1);
}

// Both sites are headed by the helper's constructor (the program's own code); their names tell
// them apart by the caller, and the leaking one is the marked call.
TEST_P(PythonSeeds, SitesThroughOneHelperAreNamedByTheirCallers) {
    Json rep = run_seed(GetParam(), "through_a_helper");
    auto [function, line] = *marked_lines("through_a_helper").begin();
    std::set<std::string> labels;
    int leaks = 0;
    for (const auto& s : rep["sites"]) {
        // Python 3.11+ names code by qualified name, older ones by name only.
        std::string head = s["headline"]["function"];
        if (head != "Buffer.__init__" && head != "__init__") continue;
        EXPECT_EQ(fs::path(s["headline"]["file"].get<std::string>()).filename(), "user_tensor.py");
        labels.insert(s["label"]);
        if (s["verdict"] != "leak") continue;
        ++leaks;
        EXPECT_NE(s["label"].get<std::string>().find(
                      "through_a_helper (seeds.py:" + std::to_string(line) + ")"),
                  std::string::npos)
            << s["label"];
    }
    EXPECT_EQ(leaks, 1) << rep["sites"].dump(1);
    EXPECT_EQ(labels.size(), 2u) << rep["sites"].dump(1);
}

// PyTorch's default, its caching allocator (fake_torch's emulation): the driver sees segments, not
// tensors, and a loop that frees what it makes asks for them only in its first pass.
Json run_cached(const std::string& python, const std::string& scenario,
                std::map<std::string, std::string> env = {}) {
    env["FAKE_TORCH_CACHING"] = "1";
    return run_seed(python, scenario, std::move(env));
}

// The first steps of a training run grow the cache: the first step's pass through the blocks
// keeps each block's output for the backward pass (a segment per block or two), the optimizer's
// first step makes its state, and the second step's pass finds the cache taken by that state. The
// cache keeps those segments and every later step reuses them unseen: no leak, where the blocks'
// loop and the training loop were reported leaks before. The same steps keeping each output ask
// for segments in every step: a leak.
TEST_P(PythonSeeds, WhatTheCachingAllocatorGrewInTheFirstStepsIsNoLeak) {
    for (const char* scenario : {"training_steps", "training_with_adam"}) {
        Json rep = run_cached(GetParam(), scenario);
        EXPECT_TRUE(leak_headlines(rep).empty()) << scenario << rep["sites"].dump(1);
        int grown = 0;
        for (const auto& s : rep["sites"]) {
            if (!has_hint(s["hints"], "caching allocator grew these segments early")) continue;
            ++grown;
            EXPECT_EQ(s["verdict"], "retained") << s.dump(1);
        }
        EXPECT_GE(grown, 1) << scenario << rep["sites"].dump(1);
        // Only the iterations that grew the cache show, and the report says so.
        for (const auto& l : rep["loops"])
            EXPECT_TRUE(l["seen_through_cache"]) << l.dump();
    }
    for (const auto& l : run_seed(GetParam(), "training_steps")["loops"])
        EXPECT_FALSE(l["seen_through_cache"]) << l.dump();
    Json kept = run_cached(GetParam(), "training_steps_keeping_outputs");
    EXPECT_FALSE(leak_headlines(kept).empty()) << kept["sites"].dump(1);
    for (const auto& s : kept["sites"]) {
        if (s["verdict"] != "leak") continue;
        EXPECT_TRUE(has_hint(s["hints"], "segments of PyTorch's caching allocator")) << s.dump(1);
    }
}

// Batches growing each step, every tensor freed: the cache asks for ever larger segments, which
// reads as a leak of the loop (a segment per step, held to the end) and is growth.
TEST_P(PythonSeeds, ACacheGrowingForLargerBatchesIsGrowthNotALeak) {
    Json rep = run_cached(GetParam(), "growing_batches");
    EXPECT_TRUE(leak_headlines(rep).empty()) << rep["sites"].dump(1);
    int growing = 0;
    for (const auto& s : rep["sites"]) {
        if (s["verdict"] != "growth") continue;
        ++growing;
        EXPECT_TRUE(has_hint(s["hints"], "ever larger segments")) << s.dump(1);
    }
    EXPECT_GE(growing, 1) << rep["sites"].dump(1);
    EXPECT_TRUE(leak_headlines(run_seed(GetParam(), "growing_batches")).empty());
}

// The lines of fake_torch.data's for and while statements: the loops of its pin thread.
std::set<int> pin_thread_loop_lines() {
    std::ifstream in(Paths::source() + "/tests/python_scenarios/site-packages/fake_torch/data.py");
    std::set<int> out;
    std::string text;
    for (int line = 1; std::getline(in, text); ++line) {
        const size_t code = text.find_first_not_of(' ');
        if (code != std::string::npos &&
            (text.compare(code, 4, "for ") == 0 || text.compare(code, 6, "while ") == 0))
            out.insert(line);
    }
    EXPECT_FALSE(out.empty()) << "no loop in fake_torch/data.py";
    return out;
}

std::vector<Json> pinned_sites(const Json& rep) {
    std::vector<Json> out;
    for (const auto& s : rep["sites"])
        for (const auto& kind : s["kinds"])
            if (kind == "pinned_host") out.push_back(s);
    return out;
}

// DataLoader(pin_memory=True): the loader's own thread pins each batch through PyTorch's
// pinned-memory cache (fake_torch's emulation), which grows by the batches in flight in the first
// steps and by a block for the first epoch's shorter last batch, then serves every batch: no
// leak, whatever the device allocator does (the host one always caches). That thread runs no code
// of the program's own: its loop is found in the library's Python frames (a loop statement of
// fake_torch/data.py: the loop pinning a batch's items), where one loop per native frame of the
// stack was found before. Pinned batches the program keeps
// make a block in every step of every epoch: a leak, whose hint says what such blocks are. Without
// workers (the training loop pins), no leak either.
TEST_P(PythonSeeds, APinnedMemoryCacheServingEveryBatchIsNoLeak) {
    const std::set<int> loop_lines = pin_thread_loop_lines();
    const std::map<std::string, std::string> modes[] = {
        {},
        {{"FAKE_TORCH_CACHING", "1"}},
        {{"FAKE_TORCH_CACHING", "1"}, {"PYTORCH_NO_CUDA_MEMORY_CACHING", "1"}}};
    for (const auto& env : modes) {
        Json rep = run_seed(GetParam(), "loader_with_pinned_memory", env);
        std::string mode = "env:";
        for (const auto& [name, value] : env)
            mode += " " + name + "=" + value;
        EXPECT_TRUE(leak_headlines(rep).empty()) << mode << rep["sites"].dump(1);
        std::vector<Json> pinned = pinned_sites(rep);
        ASSERT_EQ(pinned.size(), 1u) << mode << rep["sites"].dump(1);
        EXPECT_EQ(pinned[0]["verdict"], "retained") << mode << pinned[0].dump(1);
        EXPECT_TRUE(has_hint(pinned[0]["hints"], "pinned-memory cache grew these blocks"))
            << mode << pinned[0].dump(1);
        int pin_loops = 0;
        for (const auto& l : rep["loops"]) {
            const std::string file = l["file"].is_string() ? l["file"].get<std::string>() : "";
            const std::string name = fs::path(file).filename().string();
            EXPECT_TRUE(name == "seeds.py" || name == "data.py") << mode << l.dump();
            if (name != "data.py") continue;
            ++pin_loops;
            ASSERT_TRUE(l["loop_line"].is_number()) << l.dump();
            EXPECT_TRUE(loop_lines.count(l["loop_line"].get<int>())) << l.dump();
        }
        // The second epoch's thread finds every block it needs in the cache.
        EXPECT_EQ(pin_loops, 1) << mode << rep["loops"].dump(1);
    }
    // Without workers the training loop's own thread pins each batch as it fetches it.
    Json in_loop = run_cached(GetParam(), "loader_pinning_in_the_loop");
    EXPECT_TRUE(leak_headlines(in_loop).empty()) << in_loop["sites"].dump(1);
    EXPECT_FALSE(pinned_sites(in_loop).empty()) << in_loop["sites"].dump(1);
    Json kept = run_cached(GetParam(), "loader_keeping_pinned_batches");
    std::vector<Json> pinned = pinned_sites(kept);
    ASSERT_EQ(pinned.size(), 1u) << kept["sites"].dump(1);
    EXPECT_EQ(pinned[0]["verdict"], "leak") << pinned[0].dump(1);
    EXPECT_TRUE(has_hint(pinned[0]["hints"], "blocks of PyTorch's pinned-memory cache"))
        << pinned[0].dump(1);
    int pin_loops = 0;
    for (const auto& l : kept["loops"])
        pin_loops +=
            l["file"].is_string() && fs::path(l["file"].get<std::string>()).filename() == "data.py";
    EXPECT_EQ(pin_loops, 2) << kept["loops"].dump(1);
}

// The sites of fake_torch's autograd engine (at::native::empty_cuda: one per kind of node, as
// libtorch's backward functions differ), each with the function of its loop.
std::vector<std::pair<Json, std::string>> engine_sites(const Json& rep) {
    std::vector<std::pair<Json, std::string>> found;
    for (const auto& s : rep["sites"]) {
        if (!s["headline"].is_object() || !s["headline"]["function"].is_string() ||
            s["headline"]["function"].get<std::string>().find("empty_cuda") == std::string::npos)
            continue;
        std::string loop;
        if (s["loop"].is_number())
            loop = last_name(rep["loops"][s["loop"].get<size_t>()]["function"]);
        found.emplace_back(s, loop);
    }
    EXPECT_EQ(found.size(), 3u) << "a site per kind of node: " << rep["sites"].dump(1);
    return found;
}

// PyTorch makes gradients on its autograd engine's own thread, whose stacks hold only libtorch's
// native frames (fake_torch.autograd, libtorch_fake_autograd.so). That thread's loops are the
// engine's, not the program's: its allocations are timed by the training loop, where gradients
// dropped by the next step's zero_grad() are no leak, and gradients the program keeps grow by a
// step's worth (6 x 1 MiB, a third of it through each kind of node) per step, with the hint that
// names gradients (not that of a model rebuilt per outer loop, which several sites leaking
// alike in a loop with an inner one would get). Before, they were timed by a loop of the engine's
// frames, of one iteration per gradient. The engine's own loops time nothing then, and the text
// report does not list them; nor, even without source, a loop per frame down to start_thread
// and clone3 with the same iterations. Under the caching allocator the training loop shows only
// its first steps, so the engine's own loop times them: the cache's warm-up there is no leak,
// gradients kept still are. And the engine's evaluate_function is not the program's evaluation:
// no "evaluation holds" hint, which a real evaluation after the training still gets.
TEST_P(PythonSeeds, GradientsMadeOnTheAutogradThreadAreTimedByTheTrainingLoop) {
    Json rep = run_seed(GetParam(), "training_with_backward");
    for (const auto& [dropped, loop] : engine_sites(rep)) {
        // Timed by the training loop: transient, even where the last step's backward stalled on a
        // loaded machine (GradientsOfAWarmUpOrASlowLastStepAreTimedByTheTrainingLoop).
        EXPECT_EQ(dropped["verdict"], "transient") << dropped.dump(1);
        EXPECT_EQ(loop, "training_with_backward") << rep["loops"].dump(1);
    }
    EXPECT_TRUE(leak_headlines(rep).empty()) << rep["sites"].dump(1);

    std::string kept_trace = run_seed_trace(GetParam(), "training_keeping_gradients");
    ASSERT_FALSE(kept_trace.empty());
    Json kept = report(kept_trace);
    double growth = 0;
    std::set<std::string> nodes; // the sites' names tell them apart by the node that made them
    for (const auto& [grown, loop] : engine_sites(kept)) {
        const std::string label = grown["label"].get<std::string>();
        for (const char* node :
             {"AddmmBackward0::apply", "ReluBackward0::apply", "AccumulateGrad::apply"})
            if (label.find(" ← torch::autograd::") != std::string::npos &&
                label.find(node) != std::string::npos)
                nodes.insert(node);
        EXPECT_EQ(label.find("(site #"), std::string::npos) << label;
        EXPECT_EQ(grown["verdict"], "leak") << grown.dump(1);
        EXPECT_EQ(loop, "training_with_backward") << kept["loops"].dump(1);
        EXPECT_TRUE(has_hint(grown["hints"], "made by PyTorch's autograd engine")) << grown.dump(1);
        EXPECT_FALSE(has_hint(grown["hints"], "construction code")) << grown.dump(1);
        growth += grown["growth_bytes_per_iteration"].get<double>();
    }
    EXPECT_EQ(growth, 6 << 20) << kept["sites"].dump(1);
    EXPECT_EQ(nodes.size(), 3u) << kept["sites"].dump(1);
    EXPECT_FALSE(has_hint(kept["hints"], "evaluation holds")) << kept["hints"].dump();
    // (A build of the engine with debug info, as under ASan, finds its real loop, the `for` of
    // thread_main, from its source: that one is no echo.)
    for (const auto& l : kept["loops"]) {
        const std::string function = l["function"].get<std::string>();
        EXPECT_TRUE(function != "start_thread" && function != "clone3") << kept["loops"].dump(1);
    }
    EXPECT_FALSE(text_report_says(kept_trace, "loop in torch::autograd")) << kept["loops"].dump(1);
    EXPECT_TRUE(text_report_says(kept_trace, "in a library's own thread"));

    EXPECT_TRUE(has_hint(run_seed(GetParam(), "two_phases")["hints"], "evaluation holds"));

    Json cached = run_cached(GetParam(), "timed_training_with_backward");
    for (const auto& [warm, loop] : engine_sites(cached)) {
        // Timed by the engine's own loop (the cache's warm-up: retained), or by the first forward
        // pass's loop when the backward came right after it, by the machine's timing (transient).
        EXPECT_NE(warm["verdict"], "leak") << warm.dump(1);
        EXPECT_NE(warm["verdict"], "accumulation") << warm.dump(1);
    }
    EXPECT_TRUE(leak_headlines(cached).empty()) << cached["sites"].dump(1);
    Json cached_kept = run_cached(GetParam(), "timed_training_keeping_gradients");
    for (const auto& [kept_segments, loop] : engine_sites(cached_kept))
        EXPECT_EQ(kept_segments["verdict"], "leak") << kept_segments.dump(1);
}

// The last step's backward() starts long after its forward pass (0.3 s, longer than the 12 steps
// before it took): its gradients are still that step's, timed by the training loop, as they are
// when no step stalls. Without the cache every step shows, so the training loop holds its last
// iteration to its end for a site that made no more gradients in it than in the others.
// A warm-up step before the loop makes gradients from the same stacks on the engine's thread as
// the loop's steps do: they too are timed by the training loop, which takes a site that allocated
// no more before its first step than in one step.
TEST_P(PythonSeeds, GradientsOfAWarmUpOrASlowLastStepAreTimedByTheTrainingLoop) {
    for (const std::string scenario :
         {"training_with_a_slow_last_backward", "training_after_a_warm_up_backward"}) {
        Json dropped = run_seed(GetParam(), scenario);
        for (const auto& [site, loop] : engine_sites(dropped)) {
            EXPECT_EQ(site["verdict"], "transient") << scenario << site.dump(1);
            EXPECT_EQ(loop, "training_with_backward") << scenario << dropped["loops"].dump(1);
        }
        Json kept = run_seed(GetParam(), scenario + "_keeping_gradients");
        double growth = 0;
        for (const auto& [site, loop] : engine_sites(kept)) {
            EXPECT_EQ(site["verdict"], "leak") << scenario << site.dump(1);
            EXPECT_EQ(loop, "training_with_backward") << scenario << kept["loops"].dump(1);
            growth += site["growth_bytes_per_iteration"].get<double>();
        }
        EXPECT_EQ(growth, 6 << 20) << scenario << kept["sites"].dump(1);
    }
}

// A short run under the cache ends before the warm-up rule can tell the first steps' segments from
// a leak (analysis/verdicts.h): the leak it reports says so. A run whose cache grew for longer than
// that, or a leak of tensors (no cache), does not.
TEST_P(PythonSeeds, AShortRunsCacheLeakSaysItMayBeTheWarmUp) {
    const std::string kWarmUpHint = "PyTorch's cache warming up, if the run was short";
    Json short_run = run_cached(GetParam(), "training_with_backward");
    size_t leaks = 0;
    for (const auto& s : short_run["sites"]) {
        if (s["verdict"] != "leak") continue;
        ++leaks;
        EXPECT_TRUE(has_hint(s["hints"], kWarmUpHint)) << s.dump(1);
    }
    EXPECT_GT(leaks, 0u) << "the documented short-run miss went away: drop the hint's test?\n"
                         << short_run["sites"].dump(1);

    Json long_leak = run_cached(GetParam(), "timed_training_keeping_gradients");
    for (const auto& [kept, loop] : engine_sites(long_leak)) {
        EXPECT_EQ(kept["verdict"], "leak") << kept.dump(1);
        EXPECT_FALSE(has_hint(kept["hints"], kWarmUpHint)) << kept.dump(1);
    }

    for (const auto& s : run_seed(GetParam(), "training_keeping_gradients")["sites"])
        EXPECT_FALSE(has_hint(s["hints"], kWarmUpHint)) << s.dump(1);
}

// PyTorch without caching (PYTORCH_NO_CUDA_MEMORY_CACHING, `--per-tensor --no-cache`) still
// allocates from the caching allocator's code, one cudaMalloc per tensor: those are tensors, and
// a leak followed by a long quiet loop stays a leak, as it is without that code. Under the cache
// the same program reads as the cache's warm-up (the documented miss).
TEST_P(PythonSeeds, WithoutCachingTheCachingAllocatorsCodeAllocatesTensors) {
    const std::string scenario = "leak_then_long_steady_loop";
    const auto leak = marked_lines(scenario);
    EXPECT_EQ(leak_headlines(run_seed(GetParam(), scenario)), leak);
    Json uncached = run_cached(GetParam(), scenario, {{"PYTORCH_NO_CUDA_MEMORY_CACHING", "1"}});
    EXPECT_EQ(leak_headlines(uncached), leak) << uncached["sites"].dump(1);
    for (const auto& s : uncached["sites"])
        EXPECT_FALSE(has_hint(s["hints"], "caching allocator")) << s.dump(1);
    Json cached = run_cached(GetParam(), scenario);
    EXPECT_TRUE(leak_headlines(cached).empty()) << cached["sites"].dump(1);
}

// With the cache on, the field reports' leaks that outgrow the cache's free blocks within a few
// iterations still read as leaks, and what is freed as none. (A leak smaller than what the cache
// holds free never reaches the driver: per_fold's models share one 20 MiB segment.)
TEST_P(PythonSeeds, UnderTheCachingAllocatorLeaksStayLeaksAndNothingElseIs) {
    for (const char* leaking :
         {"append_output", "loss_sum", "evaluate", "train_then_fixed_loop", "items_then_outputs",
          "leaky_worker_thread", "validated_every_few_steps"}) {
        Json rep = run_cached(GetParam(), leaking);
        EXPECT_FALSE(leak_headlines(rep).empty()) << leaking << rep["sites"].dump(1);
    }
    for (const char* clean :
         {"append_item", "kept_past_loop", "evaluate_detached", "threads_churn",
          "workers_per_epoch_released", "pool_per_epoch_released", "model_to_device"}) {
        Json rep = run_cached(GetParam(), clean);
        EXPECT_TRUE(leak_headlines(rep).empty()) << clean << rep["sites"].dump(1);
    }
}

// The 65 MiB batch fails as a segment of its own (rounded to 2 MiB), then again after the cache
// gave back what it held: both failures are the batch's line.
TEST_P(PythonSeeds, UnderTheCachingAllocatorTheOutOfMemoryIsTheWrongBatchsLine) {
    Json oom = run_cached(GetParam(), "wrong_batch_size", {{"FAKECUDA_CAPACITY", "41943040"}});
    ASSERT_EQ(oom["ooms"].size(), 2u) << oom.dump(1);
    for (const auto& o : oom["ooms"]) {
        EXPECT_EQ(o["requested_bytes"], 66u << 20);
        const Json* site = site_by_id(oom, o["site"]);
        ASSERT_NE(site, nullptr);
        std::set<std::pair<std::string, int>> got{python_headline(*site)};
        EXPECT_EQ(got, marked_lines("wrong_batch_size"));
    }
}

// Requests served as asyncio tasks: the event loop steps each task's coroutine, so no loop of the
// program is on their stacks; the loop is the event loop's own, and tasks in flight at once
// overlap.
TEST_P(PythonSeeds, RequestsServedAsAsyncioTasks) {
    const std::string tasks_hint = "allocated in asyncio tasks";
    // Waves of three tasks: each request's kept output is the leak; its input, freed when its
    // task ends, is not.
    Json kept = run_seed(GetParam(), "served_in_tasks");
    EXPECT_EQ(leak_headlines(kept), marked_lines("served_in_tasks")) << kept["sites"].dump(1);
    for (const auto& s : kept["sites"]) {
        if (s["verdict"] == "leak") {
            EXPECT_TRUE(has_hint(s["hints"], tasks_hint)) << s.dump(1);
        }
    }
    Json released = run_seed(GetParam(), "served_in_tasks_released");
    EXPECT_TRUE(leak_headlines(released).empty()) << released["sites"].dump(1);
    // All the tasks at once through one gather, nothing kept, and the program exits: what the
    // tasks hold rises over all of them and is freed after the last allocation, which reads as a
    // leak (docs/loops-and-verdicts.md, "When it guesses wrong"). Each such site says what it may
    // be.
    Json gathered = run_seed(GetParam(), "gathered_at_once");
    int kept_sites = 0;
    for (const auto& s : gathered["sites"]) {
        if (s["verdict"] != "leak" && s["verdict"] != "accumulation") continue;
        ++kept_sites;
        EXPECT_TRUE(has_hint(s["hints"], tasks_hint)) << s.dump(1);
    }
    EXPECT_GE(kept_sites, 1) << gathered["sites"].dump(1);
    // A loop of the program awaiting one request after another is the program's own loop.
    Json awaited = run_seed(GetParam(), "awaited_in_a_loop");
    EXPECT_EQ(leak_headlines(awaited), marked_lines("awaited_in_a_loop"))
        << awaited["sites"].dump(1);
    for (const auto& s : awaited["sites"]) {
        EXPECT_FALSE(has_hint(s["hints"], tasks_hint)) << s.dump(1);
        if (s["verdict"] != "leak") continue;
        const Json& loop = awaited["loops"][s["loop"].get<size_t>()];
        EXPECT_EQ(fs::path(loop["file"].get<std::string>()).filename(), "seeds.py") << loop.dump();
        EXPECT_TRUE(loop["loop_line"].is_number()) << loop.dump();
    }
}

INSTANTIATE_TEST_SUITE_P(Interpreters, PythonSeeds, testing::ValuesIn(interpreters()),
                         [](const testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param;
                             if (name.rfind("absent:", 0) == 0)
                                 name = "absent_" + name.substr(7);
                             else if (name == "/usr/bin/python3")
                                 name = "debian";
                             else
                                 name = "py" + fs::path(name).filename().string().substr(6);
                             for (char& c : name)
                                 if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

} // namespace
} // namespace gpuleak::e2e
