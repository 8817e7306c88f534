// Pass 1 finds the loops while it reads the trace's definitions, and is given only allocations and
// markers (trace/thread_merge.h's Timed); of the other timed records it has each thread's first
// and last time. Its loops must be those of a pass over every event (find_loops).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "analysis/analyze.h"
#include "gpuleak/format/trace_builder.h"

namespace gpuleak::analyzer {
namespace {

using format::ThreadRef;
using format::TraceBuilder;

enum class Frees { WithinTheirRound, AfterTheNextRoundStarted, BeforeTheirThreadsFirstAllocation };

// Four rounds of two worker threads each (one routine, train.py's `worker`), started 1000 ns
// apart; each worker allocates once and frees it within its round. Where frees alone make a
// round's threads overlap the next round's, the rounds are one.
std::string workers_in_rounds(Frees frees) {
    TraceBuilder b;
    b.process({.pid = 4242, .exe = "/usr/bin/python3", .argv = {"python3", "train.py"}});
    ThreadRef main = b.thread(1, "main");
    uint64_t worker_code = b.py_code(main, "train.py", "worker", 10);
    b.alloc(main, 1, 0x10, 64);
    for (uint64_t round = 1; round <= 4; ++round)
        for (uint64_t i = 0; i < 2; ++i) {
            uint64_t start = 1000 * round + i;
            ThreadRef w = b.thread(100 + 2 * round + i, "worker");
            uint64_t stack = b.py_stack(w, {{worker_code, 6, true}});
            uint64_t address = 0x100000 * round + 0x1000 * i;
            if (frees == Frees::BeforeTheirThreadsFirstAllocation && round > 1)
                b.free(w, start - 985, 0xdead); // before the last round's threads end
            b.alloc(w, start + 10, address, 4096, 0, {.py_stack = stack});
            b.free(w, frees == Frees::AfterTheNextRoundStarted ? start + 1500 : start + 20,
                   address);
        }
    b.end(10000);
    char path[] = "/tmp/gpuleak-pass-one-XXXXXX";
    int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    close(fd);
    b.write(path);
    return path;
}

bool has_thread_rounds(const Loops& loops) {
    for (const Loop& l : loops.loops)
        if (l.source == "threads") return true;
    return false;
}

TEST(PassOne, FindsTheLoopsOfAPassOverEveryEvent) {
    for (Frees frees : {Frees::WithinTheirRound, Frees::AfterTheNextRoundStarted,
                        Frees::BeforeTheirThreadsFirstAllocation}) {
        SCOPED_TRACE(static_cast<int>(frees));
        std::string path = workers_in_rounds(frees);
        AnalyzeOptions options;
        options.read_modules = false;
        Analysis a;
        std::string error;
        const bool analyzed = analyze(path, options, a, error);
        std::remove(path.c_str());
        ASSERT_TRUE(analyzed) << error;
        ASSERT_FALSE(a.trace.late_definitions);
        // The rounds are a loop only where each round's threads end before the next begin.
        EXPECT_EQ(has_thread_rounds(a.loops), frees == Frees::WithinTheirRound);

        Loops every = find_loops(a.trace, *a.sites, options.loops);
        ASSERT_EQ(a.loops.loops.size(), every.loops.size());
        for (size_t i = 0; i < every.loops.size(); ++i) {
            EXPECT_EQ(a.loops.loops[i].source, every.loops[i].source);
            EXPECT_EQ(a.loops.loops[i].starts, every.loops[i].starts);
            EXPECT_EQ(a.loops.loops[i].end_ts, every.loops[i].end_ts);
        }
        EXPECT_EQ(a.loops.by_site_thread, every.by_site_thread);
    }
}

} // namespace
} // namespace gpuleak::analyzer
