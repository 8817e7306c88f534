// The frame-rule walk against libunwind's unw_backtrace on the same stacks: frames compiled with
// and without frame pointers, with alloca and with a realigned stack, mixed, deep, truncated, on
// threads, in a signal handler and on an alternate signal stack. Both are called from one call
// instruction, so their results must be identical, first frame included.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "recorder/unwind/frame_walk.h"
#include "shapes.h"

namespace {

using gpuleak::unwind::FrameRule;
using gpuleak::unwind::RuleCache;
using gpuleak::unwind::WalkContext;
using gpuleak::unwind::WalkMemo;

using Taker = int (*)(uint64_t*, int, const WalkContext*);
void* g_unw_backtrace = nullptr; // unw_backtrace, taken as a Taker or as the fallback

// Stands in for libunwind where a test must know whether the walk fell back.
constexpr int kFellBack = -7;
int report_fallback(void**, int) {
    return kFellBack;
}

__attribute__((noinline)) int take(Taker taker, uint64_t* frames, int max,
                                   const WalkContext* context) {
    int n = taker(frames, max, context);
    __asm__ volatile("" ::: "memory"); // not a tail call: the same frame for both
    return n;
}

struct Capture {
    WalkContext context;
    int max = 256;
    bool fallback_is_libunwind = true;
    std::vector<uint64_t> walked, unwound;
    int walked_n = 0;
};

std::vector<uint64_t> frames_of(const uint64_t* frames, int n) {
    return n > 0 ? std::vector<uint64_t>(frames, frames + n) : std::vector<uint64_t>{};
}

void leaf(void* arg) {
    auto* c = static_cast<Capture*>(arg);
    gpuleak_unwind_fallback = c->fallback_is_libunwind
                                  ? reinterpret_cast<gpuleak::unwind::BacktraceFn>(g_unw_backtrace)
                                  : report_fallback;
    const auto libunwind = reinterpret_cast<Taker>(g_unw_backtrace);
    // One call instruction for both: the index hidden from the optimizer keeps the loop rolled.
    const Taker takers[2] = {gpuleak_backtrace, libunwind};
    uint64_t frames[2][512];
    int counts[2];
    for (int i = 0; i < 2; ++i) {
        __asm__ volatile("" : "+r"(i));
        counts[i] = take(takers[i], frames[i], c->max, &c->context);
    }
    c->walked_n = counts[0];
    c->walked = frames_of(frames[0], counts[0]);
    c->unwound = frames_of(frames[1], counts[1]);
}

class FrameWalk : public testing::Test {
protected:
    static void SetUpTestSuite() {
        void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(lib, nullptr) << "libunwind.so.8 (Debian libunwind8): " << dlerror();
        g_unw_backtrace = dlsym(lib, "unw_backtrace");
        ASSERT_NE(g_unw_backtrace, nullptr);
    }
    // A capture on this thread's stack with a fresh cache and memo.
    Capture capture() {
        Capture c;
        c.context.cache = cache_.get();
        memo_memory_.assign(WalkMemo::bytes(kMemoFrames) / sizeof(uint64_t) + 1, 0);
        c.context.memo = WalkMemo::place(memo_memory_.data(), kMemoFrames);
        EXPECT_TRUE(
            gpuleak::unwind::current_stack_bounds(c.context.stack_low, c.context.stack_high));
        return c;
    }
    static constexpr unsigned kMemoFrames = 256;
    std::unique_ptr<RuleCache> cache_ = std::make_unique<RuleCache>();
    std::vector<uint64_t> memo_memory_;
};

// How many of the frames have a rule of this kind: each shape's test proves it met its kind.
int frames_with(const std::vector<uint64_t>& frames, FrameRule::Cfa kind) {
    int n = 0;
    for (uint64_t ip : frames)
        n += gpuleak::unwind::rule_for_return_address(ip).cfa() == kind;
    return n;
}

// Runs `shape` to `depth` twice from one call site: with libunwind as the fallback (the results
// must agree), then with a fallback that reports itself (the walk must not have needed it, and
// takes the whole stack from the first walk).
std::vector<uint64_t> expect_walked_alone(Capture c, shape_fn shape, int depth) {
    shape_next = shape;
    unsigned long reused = 0;
    for (int pass = 0; pass < 2; ++pass) {
        __asm__ volatile("" : "+r"(pass)); // one call site for both passes
        c.fallback_is_libunwind = pass == 0;
        if (c.context.memo) reused = c.context.memo->reused;
        shape(depth, leaf, &c);
        EXPECT_GT(c.unwound.size(), static_cast<size_t>(depth));
        EXPECT_NE(c.walked_n, kFellBack) << "depth " << depth;
        EXPECT_EQ(c.walked, c.unwound) << "depth " << depth << ", pass " << pass;
    }
    if (c.context.memo) {
        EXPECT_EQ(c.context.memo->reused, reused + c.unwound.size() - 1) << "depth " << depth;
    }
    return c.unwound;
}

TEST_F(FrameWalk, OptimizedCodeWithoutFramePointers) {
    for (int depth : {0, 1, 10, 35, 100})
        EXPECT_GE(frames_with(expect_walked_alone(capture(), shape_optimized, depth),
                              FrameRule::Cfa::SpPlus),
                  depth);
}

TEST_F(FrameWalk, FramePointersAndAlloca) {
    for (int depth : {0, 1, 10, 35})
        EXPECT_GE(frames_with(expect_walked_alone(capture(), shape_frame_pointer, depth),
                              FrameRule::Cfa::BpPlus),
                  depth);
}

TEST_F(FrameWalk, RealignedStacks) {
    for (int depth : {1, 10, 35})
        EXPECT_GE(frames_with(expect_walked_alone(capture(), shape_realigned, depth),
                              FrameRule::Cfa::DerefBpPlus),
                  depth);
}

TEST_F(FrameWalk, MixedShapes) {
    for (int depth : {2, 3, 17, 60, 100}) { // 100 levels: about 230 frames
        std::vector<uint64_t> frames = expect_walked_alone(capture(), shape_mixed, depth);
        EXPECT_GE(frames_with(frames, FrameRule::Cfa::BpPlus), depth / 3);
        EXPECT_GE(frames_with(frames, FrameRule::Cfa::DerefBpPlus), depth / 3);
    }
}

// The frames inside two functions called from one place lie at the same addresses: the walk there
// starts alike, and only the stack word holding the return address into either tells them apart.
// The frames inside are left the previous walk's way, and from that word on each walk finds its
// own caller.
TEST_F(FrameWalk, SameStackPointerDifferentCallers) {
    Capture c = capture();
    shape_next = shape_optimized;
    c.fallback_is_libunwind = false;
    std::vector<uint64_t> a, b;
    for (int i = 0; i < 6; ++i) {
        const shape_outer outer = i % 2 ? shape_outer_b : shape_outer_a;
        const unsigned long reused = c.context.memo->reused;
        outer(0, 8, leaf, &c);
        ASSERT_NE(c.walked_n, kFellBack);
        EXPECT_EQ(c.walked, c.unwound) << "call " << i;
        (i % 2 ? b : a) = c.walked;
        if (i > 0) {
            EXPECT_GE(c.context.memo->reused - reused, 9u) << "call " << i; // the shape's frames
        }
    }
    EXPECT_NE(a, b);
}

__attribute__((noipa)) void run_outer(Capture& c, shape_outer outer, int pad) {
    outer(pad, 6, leaf, &c);
    __asm__ volatile("" ::: "memory");
}

// The last walk's frame running `function`: its index, or -1 if none. The return address nearest
// above the function's start is inside it: the functions after it start further up.
int frame_in(const WalkMemo& memo, const void* function) {
    const auto begin = reinterpret_cast<uint64_t>(function);
    const gpuleak::unwind::WalkRecord& r = memo.records[memo.previous];
    int found = -1;
    for (unsigned f = 0; f < r.n; ++f)
        if (r.ip[f] > begin && r.ip[f] - begin < 4096 &&
            (found < 0 || r.ip[f] - begin < r.ip[found] - begin))
            found = static_cast<int>(f);
    return found;
}

// That frame's stack pointer; 0 if there is none.
uint64_t sp_in(const WalkMemo& memo, const void* function) {
    int f = frame_in(memo, function);
    return f < 0 ? 0 : memo.records[memo.previous].sp[f];
}

// A frame at the same stack address with another return address has another rule: here
// shape_outer_a's (whose CFA is rsp + 520 or so) and shape_outer_padded's (rbp + 16), put at one
// address by padding the latter's stack. The previous walk's way out of the one must not be taken
// for the other.
TEST_F(FrameWalk, SameStackPointerDifferentRules) {
    Capture c = capture();
    shape_next = shape_optimized;
    c.fallback_is_libunwind = false;
    run_outer(c, shape_outer_a, 0);
    const uint64_t target = sp_in(*c.context.memo, reinterpret_cast<const void*>(shape_outer_a));
    ASSERT_NE(target, 0u);
    int pad = 0;
    for (int tries = 0; tries < 4; ++tries) {
        run_outer(c, shape_outer_padded, pad);
        const uint64_t sp =
            sp_in(*c.context.memo, reinterpret_cast<const void*>(shape_outer_padded));
        ASSERT_GE(sp, target) << "shape_outer_a's frame must be the larger";
        if (sp == target) break;
        pad += static_cast<int>(sp - target);
    }
    for (int i = 0; i < 6; ++i) {
        const shape_outer outer = i % 2 ? shape_outer_padded : shape_outer_a;
        run_outer(c, outer, i % 2 ? pad : 0);
        ASSERT_NE(c.walked_n, kFellBack);
        EXPECT_EQ(sp_in(*c.context.memo, reinterpret_cast<const void*>(outer)), target)
            << "call " << i;
        EXPECT_EQ(c.walked, c.unwound) << "call " << i;
    }
}

__attribute__((noipa)) void run_outer_deeper(Capture& c, shape_outer outer, int pad) {
    volatile char local[256];
    local[0] = 0;
    run_outer(c, outer, pad);
    __asm__ volatile("" ::: "memory");
    (void)local[0];
}

// A frame whose rule finds the CFA from rbp, at the same stack address and with the same return
// address as in the previous walk, but another rbp: shape_outer_padded's, called once directly and
// once through a deeper caller with less padding, so that its stack pointer is the same and its
// frame pointer lower. The previous walk's way out of it must not be taken.
TEST_F(FrameWalk, SameStackPointerAndReturnAddressOtherFramePointer) {
    Capture c = capture();
    shape_next = shape_optimized;
    c.fallback_is_libunwind = false;
    const auto* padded = reinterpret_cast<const void*>(shape_outer_padded);
    const WalkMemo& memo = *c.context.memo;
    auto bp_in_padded = [&] { return memo.records[memo.previous].bp[frame_in(memo, padded)]; };
    run_outer(c, shape_outer_padded, 1024);
    const uint64_t target = sp_in(memo, padded);
    const uint64_t target_bp = bp_in_padded();
    ASSERT_NE(target, 0u);
    // The padding that lands the frame there: estimated from the first try, then searched nearby
    // (alloca rounds sizes, and more coarsely under AddressSanitizer).
    run_outer_deeper(c, shape_outer_padded, 1024);
    const int estimate =
        1024 + static_cast<int>(static_cast<int64_t>(sp_in(memo, padded) - target));
    int pad = -1;
    for (int delta = 0; delta <= 128 && pad < 0; delta += 8)
        for (int candidate : {estimate + delta, estimate - delta}) {
            if (candidate < 0 || pad >= 0) continue;
            run_outer_deeper(c, shape_outer_padded, candidate);
            if (sp_in(memo, padded) == target) pad = candidate;
        }
#ifdef __SANITIZE_ADDRESS__
    // AddressSanitizer's alloca keeps its own alignment and redzones: the two paths' frames can
    // land 16 bytes apart whatever the padding. The Release build runs this test.
    if (pad < 0) GTEST_SKIP() << "AddressSanitizer's alloca: no padding puts the frame there";
#endif
    ASSERT_GE(pad, 0) << "no padding puts the frame at the same address";
    for (int i = 0; i < 6; ++i) {
        if (i % 2)
            run_outer_deeper(c, shape_outer_padded, pad);
        else
            run_outer(c, shape_outer_padded, 1024);
        ASSERT_NE(c.walked_n, kFellBack);
        ASSERT_EQ(sp_in(memo, padded), target) << "call " << i;
        EXPECT_EQ(bp_in_padded() == target_bp, i % 2 == 0) << "call " << i;
        EXPECT_EQ(c.walked, c.unwound) << "call " << i;
    }
}

// A realigned frame (its CFA read from the stack) at the same address, with the same return address
// and rbp as in the previous walk, but another CFA: called through 16 more bytes of padding, which
// the realignment to 64 bytes absorbs. The previous walk's CFA must not be taken.
TEST_F(FrameWalk, RealignedFrameAtTheSameAddressWithAnotherCfa) {
    Capture c = capture();
    shape_next = shape_realigned;
    c.fallback_is_libunwind = false;
    const WalkMemo& memo = *c.context.memo;
    // realigned_body's frame, the one just inside shape_realigned's: its stack pointer by pad.
    const auto* into = reinterpret_cast<const void*>(shape_realigned);
    std::vector<uint64_t> sp_by_pad;
    for (int pad = 0; pad < 128; pad += 16) {
        run_outer(c, shape_outer_padded, pad);
        sp_by_pad.push_back(memo.records[memo.previous].sp[frame_in(memo, into) - 1]);
    }
    int pad = -1;
    for (size_t i = 0; i + 1 < sp_by_pad.size() && pad < 0; ++i)
        if (sp_by_pad[i] == sp_by_pad[i + 1]) pad = static_cast<int>(i) * 16;
    ASSERT_GE(pad, 0) << "no two paddings 16 bytes apart realign to one address";
    for (int i = 0; i < 6; ++i) {
        run_outer(c, shape_outer_padded, pad + (i % 2) * 16);
        ASSERT_NE(c.walked_n, kFellBack);
        EXPECT_EQ(c.walked, c.unwound) << "call " << i;
    }
}

// Stacks of different depths below one caller: each walk leaves the common outer frames the last
// one's way.
TEST_F(FrameWalk, DifferentDepthsShareTheOuterFrames) {
    Capture c = capture();
    shape_next = shape_mixed;
    c.fallback_is_libunwind = false;
    bool first = true;
    for (int depth : {12, 5, 30, 7, 7, 19}) {
        const unsigned long reused = c.context.memo->reused;
        shape_mixed(depth, leaf, &c);
        ASSERT_NE(c.walked_n, kFellBack) << "depth " << depth;
        EXPECT_EQ(c.walked, c.unwound) << "depth " << depth;
        // The test's own frames, GoogleTest's and the C library's at least.
        if (!first) {
            EXPECT_GE(c.context.memo->reused - reused, 8u) << "depth " << depth;
        }
        first = false;
    }
}

// A walk cut at the maximum knows the way out of its frames only as far as it went.
TEST_F(FrameWalk, TruncatedWalkReusedOnlyAsFarAsItWent) {
    Capture c = capture();
    shape_next = shape_optimized;
    c.fallback_is_libunwind = false;
    for (int max : {10, 40, 10, 25}) {
        c.max = max;
        shape_optimized(30, leaf, &c);
        ASSERT_NE(c.walked_n, kFellBack);
        EXPECT_EQ(c.walked, c.unwound) << "max " << max;
    }
}

TEST_F(FrameWalk, TruncatedAtMax) {
    for (int max : {1, 2, 5, 20}) {
        Capture c = capture();
        c.max = max;
        shape_next = shape_mixed;
        shape_mixed(40, leaf, &c);
        ASSERT_EQ(c.unwound.size(), static_cast<size_t>(max));
        EXPECT_EQ(c.walked, c.unwound) << "max " << max;
    }
}

TEST_F(FrameWalk, OnAThreadEndingInClone) {
    std::thread t([] {
        auto cache = std::make_unique<RuleCache>();
        std::vector<uint64_t> memory(WalkMemo::bytes(256) / sizeof(uint64_t) + 1, 0);
        Capture c;
        c.context.cache = cache.get();
        c.context.memo = WalkMemo::place(memory.data(), 256);
        ASSERT_TRUE(
            gpuleak::unwind::current_stack_bounds(c.context.stack_low, c.context.stack_high));
        expect_walked_alone(c, shape_mixed, 30);
    });
    t.join();
}

TEST_F(FrameWalk, CacheInvalidatedWhenModulesChange) {
    Capture c = capture();
    expect_walked_alone(c, shape_optimized, 20);
    gpuleak::unwind::invalidate_rule_caches();
    expect_walked_alone(c, shape_optimized, 20);
}

// Without a cache (tracing with libunwind only) every walk is libunwind's.
TEST_F(FrameWalk, NoCacheMeansLibunwind) {
    Capture c = capture();
    c.context.cache = nullptr;
    shape_next = shape_optimized;
    shape_optimized(12, leaf, &c);
    EXPECT_EQ(c.walked, c.unwound);
    c.fallback_is_libunwind = false;
    shape_optimized(12, leaf, &c);
    EXPECT_EQ(c.walked_n, kFellBack);
}

// A signal frame (the kernel's sigreturn trampoline) has rules FrameRule cannot hold: libunwind
// walks that stack, so the result is still libunwind's.
Capture* g_signal_capture = nullptr;
void on_signal(int) {
    shape_next = shape_optimized;
    shape_optimized(3, leaf, g_signal_capture);
}

void expect_signal_stack_falls_back(Capture c) {
    g_signal_capture = &c;
    shape_next = shape_optimized;
    raise(SIGUSR1);
    ASSERT_GT(c.unwound.size(), 5u);
    EXPECT_EQ(c.walked, c.unwound);
    c.fallback_is_libunwind = false;
    raise(SIGUSR1);
    EXPECT_EQ(c.walked_n, kFellBack);
}

TEST_F(FrameWalk, SignalHandlerFallsBackToLibunwind) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    struct sigaction old {};
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    expect_signal_stack_falls_back(capture());
    sigaction(SIGUSR1, &old, nullptr);
}

TEST_F(FrameWalk, AlternateSignalStackFallsBackToLibunwind) {
    std::vector<char> alt(1 << 16);
    stack_t ss{};
    ss.ss_sp = alt.data();
    ss.ss_size = alt.size();
    stack_t old_ss{};
    ASSERT_EQ(sigaltstack(&ss, &old_ss), 0);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    struct sigaction old {};
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    expect_signal_stack_falls_back(capture());
    sigaction(SIGUSR1, &old, nullptr);
    sigaltstack(&old_ss, nullptr);
}

} // namespace
