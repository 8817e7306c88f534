// Ends the tracer cannot prevent: SIGKILL, fatal signals, _exit. The trace must stay readable and
// hold what the flush interval or the signal handlers promise; the exit status must be the one the
// program has without the tracer.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include "robustness_support.h"

namespace gpuleak::robustness {
namespace {

// Crashing programs must not litter the machine with core files.
class NoCoreDumps : public testing::Environment {
public:
    void SetUp() override {
        rlimit none{0, 0};
        setrlimit(RLIMIT_CORE, &none);
    }
};
const auto* const kNoCoreDumps = testing::AddGlobalTestEnvironment(new NoCoreDumps);

uint64_t allocations_in(const std::string& trace) {
    return e2e::report(trace)["summary"]["allocations"];
}

TEST(Signals, SigkillKeepsEveryEventOlderThanTheFlushInterval) {
    // 40 allocations 20 ms apart; killed 250 ms after the tenth (five default flush intervals).
    LiveProcess p({program("crash_after_allocs"), "40", "sleep", "20"});
    std::string line;
    while (p.read_line(line) && line != "ready 10") {
    }
    ASSERT_EQ(line, "ready 10") << p.stderr_text();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    EXPECT_EQ(p.kill_and_wait(SIGKILL), 128 + SIGKILL);
    auto traces = p.traces();
    ASSERT_EQ(traces.size(), 1u) << p.stderr_text();
    EXPECT_GE(allocations_in(traces[0]), 10u);
}

struct FatalCase {
    const char* action;
    int exit_code;
};

void PrintTo(const FatalCase& c, std::ostream* os) {
    *os << c.action << " -> exit " << c.exit_code;
}

class FatalSignal : public testing::TestWithParam<FatalCase> {};

// The periodic flush is pushed out of reach (10 s), so only the signal handler can have written the
// five allocations made just before the crash.
TEST_P(FatalSignal, FlushesThenDiesAsWithoutTheTracer) {
    const FatalCase& c = GetParam();
    std::vector<std::string> argv{program("crash_after_allocs"), "5", c.action};
    e2e::RunOptions untraced;
    untraced.preload = false;
    e2e::RunResult bare = e2e::run(argv, untraced);
    ASSERT_EQ(bare.exit_code, c.exit_code) << bare.output;

    e2e::RunOptions options;
    options.env["GPULEAK_FLUSH_MS"] = "10000";
    e2e::RunResult r = e2e::run(argv, options);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    EXPECT_EQ(allocations_in(r.traces[0]), 5u);
    EXPECT_TRUE(preload_messages(r.output).empty()) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Robustness, FatalSignal,
    testing::Values(FatalCase{"segv", 128 + SIGSEGV}, FatalCase{"abort", 128 + SIGABRT},
                    FatalCase{"term", 128 + SIGTERM},
                    // The app's own handler, installed before tracing began, still runs.
                    FatalCase{"handler-before", 42},
                    // A stack overflow: only an alternate stack lets any handler run.
                    FatalCase{"overflow", 128 + SIGSEGV}),
    [](const auto& info) {
        std::string name = info.param.action;
        for (char& ch : name)
            if (ch == '-') ch = '_';
        return name;
    });

TEST(Signals, HandlerInstalledLaterByTheAppWinsAndIsNeverReplaced) {
    std::vector<std::string> argv{program("crash_after_allocs"), "5", "handler-after"};
    e2e::RunResult r = e2e::run(argv, {});
    // 3 would mean the tracer put its handler back over the application's.
    EXPECT_EQ(r.exit_code, 42) << r.output;
    EXPECT_NE(r.output.find("app handler"), std::string::npos) << r.output;
}

TEST(Signals, WithoutHandlersACrashLosesTheUnflushedEvents) {
    // The control for FatalSignal: GPULEAK_SIGNALS=0 leaves only the periodic flush, here 10 s
    // away.
    e2e::RunOptions options;
    options.env["GPULEAK_FLUSH_MS"] = "10000";
    options.env["GPULEAK_SIGNALS"] = "0";
    e2e::RunResult r = e2e::run({program("crash_after_allocs"), "5", "segv"}, options);
    EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    EXPECT_EQ(allocations_in(r.traces[0]), 0u);
}

// The allocations of crash_after_allocs are 1 MiB + i bytes, all leaked: what is live at the end
// tells how many reached the trace and that they are its first ones (a prefix, no holes).
uint64_t allocations_kept_as_a_prefix(const std::string& trace) {
    Json s = e2e::report(trace)["summary"];
    uint64_t n = s["allocations"];
    EXPECT_EQ(s["live_bytes_end"].get<uint64_t>(), n * (1u << 20) + n * (n - (n ? 1 : 0)) / 2)
        << "not the first " << n << " allocations";
    return n;
}

TEST(Signals, UnderscoreExitLosesAtMostOneFlushInterval) {
    // 40 allocations 20 ms apart (800 ms), then _exit(7): nothing runs at exit, so only the
    // periodic flush (every 50 ms) can have written them. Allocations in the last interval (2-3)
    // may be lost; on a loaded 2-core machine the writer thread may run late, so up to 250 ms more
    // (12 allocations) are allowed. Everything older is in the trace.
    e2e::RunResult r = e2e::run({program("crash_after_allocs"), "40", "_exit", "20"}, {});
    EXPECT_EQ(r.exit_code, 7) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    uint64_t n = allocations_kept_as_a_prefix(r.traces[0]);
    EXPECT_LE(n, 40u);
    EXPECT_GE(n, 40u - 15) << "lost " << 40 - n << " allocations (" << (40 - n) * 20 << " ms)";

    // The control: with the flush 10 s away, everything made in those 800 ms is lost. (So the
    // check above is what the periodic flush earns.)
    e2e::RunOptions slow;
    slow.env["GPULEAK_FLUSH_MS"] = "10000";
    r = e2e::run({program("crash_after_allocs"), "40", "_exit", "20"}, slow);
    EXPECT_EQ(r.exit_code, 7) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    EXPECT_EQ(allocations_kept_as_a_prefix(r.traces[0]), 0u);
}

} // namespace
} // namespace gpuleak::robustness
