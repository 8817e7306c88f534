// `gpuleak run -- CMD`: the command's exit status passes through, existing LD_PRELOAD entries are
// kept, the trace and the report command are named, and --per-tensor sets the frameworks' knobs.
#include <gtest/gtest.h>

#include "e2e_support.h"

namespace gpuleak::e2e {
namespace {

RunResult front(const std::vector<std::string>& args, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv{Paths::front()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.preload = false; // the front-end sets it
    options.env = std::move(env);
    return run(argv, options);
}

TEST(Frontend, RunsTracesAndNamesTheReport) {
    RunResult r = front({"run", "-o", "t.%p.bin", "--", Paths::app("scenario_leak_loop")});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    EXPECT_NE(r.output.find("gpuleak: trace written to"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("gpuleak-report"), std::string::npos) << r.output;
    EXPECT_EQ(report(r.traces[0])["summary"]["live_count_end"], 10);
}

// A short program's trace can carry the same file time as the mark the front-end sets before the
// run (file times tick every few milliseconds): it is still named. Before the fix, 4 of 5 such
// runs here printed "no trace written".
TEST(Frontend, NamesTheTraceOfEveryShortRun) {
    for (int i = 0; i < 8; ++i) {
        RunResult r = front({"run", "-o", "t.%p.bin", "--", Paths::app("scenario_leak_loop")});
        ASSERT_EQ(r.traces.size(), 1u) << r.output;
        EXPECT_NE(r.output.find("gpuleak: trace written to ./" +
                                r.traces[0].substr(r.traces[0].rfind('/') + 1)),
                  std::string::npos)
            << "run " << i << ": " << r.output;
    }
}

TEST(Frontend, ExitStatusPassesThrough) {
    EXPECT_EQ(front({"run", "--", "/bin/sh", "-c", "exit 7"}).exit_code, 7);
    EXPECT_EQ(front({"run", "--", "/bin/sh", "-c", "kill -TERM $$"}).exit_code, 128 + 15);
    EXPECT_EQ(front({"run", "--", "/bin/sh", "-c", "exit 0"}).exit_code, 0);
}

TEST(Frontend, KeepsExistingPreloadsAndSetsPerTensorKnobs) {
    RunResult r =
        front({"run", "--per-tensor", "--", "/bin/sh", "-c",
               "echo \"P=$LD_PRELOAD\"; echo \"C=$PYTORCH_CUDA_ALLOC_CONF\"; echo "
               "\"X=$XLA_PYTHON_CLIENT_ALLOCATOR\"; "
               "echo \"T=$TF_GPU_ALLOCATOR\""},
              {{"LD_PRELOAD", "libm.so.6"}, {"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("P=" + Paths::preload() + ":libm.so.6"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("C=max_split_size_mb:128,backend:cudaMallocAsync"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("X=platform"), std::string::npos);
    EXPECT_NE(r.output.find("T=cuda_malloc_async"), std::string::npos);
    RunResult no_cache = front({"run", "--per-tensor", "--no-cache", "--", "/bin/sh", "-c",
                                "echo N=$PYTORCH_NO_CUDA_MEMORY_CACHING"});
    EXPECT_NE(no_cache.output.find("N=1"), std::string::npos) << no_cache.output;
}

TEST(Frontend, ReportSubcommandAndUsageErrors) {
    RunResult traced = front({"run", "-o", "t.%p.bin", "--", Paths::app("scenario_leak_loop")});
    ASSERT_EQ(traced.traces.size(), 1u);
    std::string out;
    std::string command = "'";
    command += Paths::front();
    command += "' report --fail-on leak '";
    command += traced.traces[0];
    command += "'";
    EXPECT_EQ(shell(command, &out), 1) << out;
    EXPECT_NE(out.find("LEAK"), std::string::npos) << out;
    EXPECT_EQ(front({"run"}).exit_code, 2);
    EXPECT_EQ(front({"bogus"}).exit_code, 2);
    EXPECT_EQ(front({"--help"}).exit_code, 0);
}

} // namespace
} // namespace gpuleak::e2e
