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

// (function, line) of every `# LEAK` line inside the scenario function `scenario`.
std::set<std::pair<std::string, int>> marked_lines(const std::string& scenario) {
    std::ifstream in(seeds_path());
    std::string text, function;
    std::set<std::pair<std::string, int>> out;
    for (int line = 1; std::getline(in, text); ++line) {
        if (text.rfind("def ", 0) == 0) function = text.substr(4, text.find('(') - 4);
        if (function == scenario && text.find("# LEAK") != std::string::npos)
            out.insert({function, line});
    }
    return out;
}

Json run_seed(const std::string& python, const std::string& scenario,
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
        return Json::object();
    }
    return report(r.traces[0]);
}

std::pair<std::string, int> python_headline(const Json& site) {
    const Json& h = site["headline"];
    if (h.is_null() || h["kind"] != "python") return {"", 0};
    EXPECT_EQ(fs::path(h["file"].get<std::string>()).filename(), "seeds.py") << h.dump();
    return {h["function"], h["line"]};
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

TEST_P(PythonSeeds, WrongBatchSizeRunsOutOfMemory) {
    Json rep = run_seed(GetParam(), "wrong_batch_size", {{"FAKECUDA_CAPACITY", "41943040"}});
    ASSERT_EQ(rep["ooms"].size(), 1u) << rep.dump(1);
    const Json* site = site_by_id(rep, rep["ooms"][0]["site"]);
    ASSERT_NE(site, nullptr);
    std::set<std::pair<std::string, int>> got{python_headline(*site)};
    EXPECT_EQ(got, marked_lines("wrong_batch_size"));
    EXPECT_EQ(rep["ooms"][0]["requested_bytes"], 65u << 20);
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
