// Rounds of threads (analysis/thread_rounds.h): which threads of one routine start a new round,
// and which routine a thread has.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/thread_rounds.h"
#include "model/call_tree.h"

namespace gpuleak::analyzer {
namespace {

ThreadSpan span(uint32_t lane, uint64_t first, uint64_t last) {
    return {lane, first, last, 1};
}

TEST(ThreadRounds, ThreadsThatOverlapShareARound) {
    // Three workers per epoch, three epochs; within an epoch each starts before the others end.
    std::vector<ThreadSpan> threads = {span(1, 10, 50),   span(2, 12, 48),   span(3, 15, 60),
                                       span(4, 70, 90),   span(5, 71, 95),   span(6, 72, 91),
                                       span(7, 100, 130), span(8, 101, 120), span(9, 99, 125)};
    Rounds r = find_rounds(threads);
    EXPECT_EQ(r.starts, (std::vector<uint64_t>{10, 70, 99}));
    EXPECT_EQ(r.threads, (std::vector<uint32_t>{3, 3, 3}));
    EXPECT_EQ(r.last_ts, 130u);
    EXPECT_TRUE(r.repeat());
}

TEST(ThreadRounds, AThreadThatStartsBeforeAllEarlierOnesEndedJoinsTheirRound) {
    // Thread 2 ends first, but thread 1 still runs when thread 3 starts: one round, not two.
    std::vector<ThreadSpan> threads = {span(1, 10, 100), span(2, 20, 30), span(3, 40, 50),
                                       span(4, 110, 120)};
    Rounds r = find_rounds(threads);
    EXPECT_EQ(r.starts, (std::vector<uint64_t>{10, 110}));
    EXPECT_EQ(r.threads, (std::vector<uint32_t>{3, 1}));
    EXPECT_FALSE(r.repeat());
}

TEST(ThreadRounds, APoolIsOneRound) {
    std::vector<ThreadSpan> threads = {span(1, 10, 1000), span(2, 11, 990), span(3, 12, 1001)};
    EXPECT_EQ(find_rounds(threads).starts.size(), 1u);
    EXPECT_FALSE(find_rounds(threads).repeat());
    EXPECT_TRUE(find_rounds({}).starts.empty());
    EXPECT_FALSE(find_rounds({}).repeat());
}

TEST(ThreadRounds, TheLastRoundMayHaveFewerThreads) {
    std::vector<ThreadSpan> threads;
    uint32_t lane = 0;
    for (uint64_t round : {0, 100, 200, 300})
        for (uint64_t i = 0; i < (round == 300 ? 2u : 3u); ++i)
            threads.push_back(span(lane++, round + i, round + 50));
    Rounds r = find_rounds(threads);
    EXPECT_EQ(r.threads, (std::vector<uint32_t>{3, 3, 3, 2}));
    EXPECT_TRUE(r.repeat());
    // Not more, and not alone; and only the last.
    r.threads = {3, 3, 3, 4};
    EXPECT_FALSE(r.repeat());
    r.threads = {3, 3, 3, 1};
    EXPECT_FALSE(r.repeat());
    r.threads = {3, 2, 3, 3};
    EXPECT_FALSE(r.repeat());
}

// Short threads started one after another in one phase, each done before the next starts (a busy
// machine): rounds of one, or of uneven sizes where some overlapped, are no loop.
TEST(ThreadRounds, ShortThreadsOfOnePhaseDoNotRepeat) {
    std::vector<ThreadSpan> one_by_one;
    for (uint32_t i = 0; i < 8; ++i)
        one_by_one.push_back(span(i, 100 * i, 100 * i + 50));
    Rounds r = find_rounds(one_by_one);
    EXPECT_EQ(r.starts.size(), 8u);
    EXPECT_FALSE(r.repeat());
    std::vector<ThreadSpan> uneven = {span(1, 0, 150),   span(2, 100, 180), span(3, 200, 250),
                                      span(4, 300, 450), span(5, 400, 460), span(6, 500, 550)};
    r = find_rounds(uneven);
    EXPECT_EQ(r.threads, (std::vector<uint32_t>{2, 1, 2, 1}));
    EXPECT_FALSE(r.repeat());
    // Two rounds could be a warm-up and the run.
    EXPECT_FALSE(
        find_rounds({span(1, 0, 10), span(2, 5, 12), span(3, 20, 30), span(4, 21, 31)}).repeat());
}

TEST(ThreadSpans, ANewThreadInASlotIsANewSpanAndTheRoutineIsItsOutermostOwnFrame) {
    CallTree calls;
    uint32_t lib = calls.node(0, "start_thread", "pthread_create.c", 442, 1, false, false);
    uint32_t routine = calls.node(lib, "worker", "train.c", 20, 2, false, true);
    uint32_t inner = calls.node(routine, "alloc", "train.c", 5, 3, false, true);
    ThreadSpans spans;
    spans.on_event(0, 7, 100); // the main thread: a free before any allocation
    spans.on_event(3, 3, 110);
    ASSERT_TRUE(spans.needs_routine(3));
    spans.on_first_alloc(3, calls, {lib, routine, inner});
    EXPECT_FALSE(spans.needs_routine(3));
    spans.on_event(3, 3, 150);
    spans.on_event(3, 1u << 16 | 3, 200); // slot 3 taken over by a new thread
    EXPECT_TRUE(spans.needs_routine(3));
    spans.on_first_alloc(3, calls, {lib});
    auto all = spans.spans();
    ASSERT_EQ(all.size(), 3u);
    std::sort(all.begin(), all.end(),
              [](const ThreadSpan& a, const ThreadSpan& b) { return a.first_ts < b.first_ts; });
    EXPECT_EQ(all[0].lane, 7u);
    EXPECT_EQ(all[0].routine, 0u);
    EXPECT_EQ(all[1].lane, 3u);
    EXPECT_EQ(all[1].first_ts, 110u);
    EXPECT_EQ(all[1].last_ts, 150u);
    EXPECT_EQ(all[1].routine, routine);
    EXPECT_EQ(all[2].lane, 1u << 16 | 3);
    EXPECT_EQ(all[2].routine, 0u) << "no frame of the program's own code";
}

// Pass 1 gives on_event only allocations and markers; the times of a lane's other records
// (a free after its last allocation, before its first) widen its span, and make rounds overlap.
TEST(ThreadSpans, TimesPassedOverWidenTheirLanesSpan) {
    CallTree calls;
    uint32_t routine = calls.node(0, "worker", "train.py", 20, 2, true, true);
    ThreadSpans spans;
    for (uint32_t lane : {1, 2, 3}) {
        spans.on_event(lane, lane, 100 * lane + 10);
        spans.on_first_alloc(lane, calls, {routine});
    }
    spans.widen(1, 105, 215); // freed after lane 2 started
    spans.widen(3, 305, 305); // a free before its first allocation
    spans.widen(9, 1, 999);   // a lane with nothing delivered: a span of its own, no routine
    auto all = spans.spans();
    std::sort(all.begin(), all.end(),
              [](const ThreadSpan& a, const ThreadSpan& b) { return a.lane < b.lane; });
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ(std::make_pair(all[0].first_ts, all[0].last_ts), std::make_pair(105ul, 215ul));
    EXPECT_EQ(std::make_pair(all[1].first_ts, all[1].last_ts), std::make_pair(210ul, 210ul));
    EXPECT_EQ(std::make_pair(all[2].first_ts, all[2].last_ts), std::make_pair(305ul, 310ul));
    EXPECT_EQ(all[0].routine, routine);
    EXPECT_EQ(all[2].routine, routine);
    EXPECT_EQ(all[3].lane, 9u);
    EXPECT_EQ(all[3].routine, 0u);
    all.pop_back();
    EXPECT_EQ(find_rounds(all).threads, (std::vector<uint32_t>{2, 1}));
}

TEST(ThreadSpans, AnySlotIndexOfADamagedTrace) {
    ThreadSpans spans;
    spans.on_event(0xffffffffu, 0xffffffffu, 5);
    spans.on_event(0xffffffffu, 0xffffffffu, 9);
    EXPECT_TRUE(spans.needs_routine(0xffffffffu));
    auto all = spans.spans();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].first_ts, 5u);
    EXPECT_EQ(all[0].last_ts, 9u);
}

} // namespace
} // namespace gpuleak::analyzer
