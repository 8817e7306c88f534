// Loop detection on call paths built by hand: which back edges make loops, where they are placed,
// and which loop holds a path. The source is replaced by a table of lines inside loop statements.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "analysis/loops.h"

namespace gpuleak::analyzer {
namespace {

struct Program {
    CallTree calls;
    std::set<std::pair<std::string, int>> loop_lines; // (function, line) inside a for/while
    // Enclosing loop statements (innermost first) where more than the line before: nesting.
    std::map<std::pair<std::string, int>, std::vector<int>> chains;
    bool source_known = true;

    // A path of (function, line) frames, outermost first; the line doubles as the position.
    std::vector<uint32_t> path(std::initializer_list<std::pair<const char*, int>> frames,
                               bool library_tail = false) {
        std::vector<uint32_t> out;
        uint32_t parent = 0;
        for (auto [function, line] : frames) {
            parent = calls.node(parent, function, "prog.py", line, static_cast<uint64_t>(line),
                                true, true);
            out.push_back(parent);
        }
        if (library_tail) {
            parent = calls.node(parent, "torch_op", "/site-packages/torch.py", 7, 7, true, false);
            out.push_back(parent);
        }
        return out;
    }

    // `path` extended inwards by frames (function, line, the program's own: a Python frame of the
    // program, else a native frame of the interpreter's), outermost first.
    std::vector<uint32_t> under(std::vector<uint32_t> path,
                                std::initializer_list<std::tuple<const char*, int, bool>> frames) {
        for (auto [function, line, own] : frames)
            path.push_back(calls.node(path.back(), function, own ? "prog.py" : "", line,
                                      static_cast<uint64_t>(line), own, own));
        return path;
    }

    // Native frames (function, line, return address), outermost first: compiled code, whose
    // addresses need not follow its lines.
    std::vector<uint32_t>
    native(std::initializer_list<std::tuple<const char*, int, uint64_t>> frames) {
        std::vector<uint32_t> out;
        uint32_t parent = 0;
        for (auto [function, line, pc] : frames) {
            parent = calls.node(parent, function, "prog.c", line, pc, false, true);
            out.push_back(parent);
        }
        return out;
    }

    // A native position's statement begins on its line (one statement a line).
    static LoopStatement oracle(const CallNode& node, void* self) {
        auto* p = static_cast<Program*>(self);
        if (!p->source_known) return {LoopContext::Unknown, 0, {}};
        LoopStatement s{LoopContext::NotInLoop, 0, {}};
        auto chain = p->chains.find({node.function_name, node.line});
        if (chain != p->chains.end())
            s = {LoopContext::InLoop, chain->second.front(), chain->second};
        else if (p->loop_lines.count({node.function_name, node.line}))
            s = {LoopContext::InLoop, node.line - 1, {node.line - 1}};
        s.statement = node.python ? 0 : node.line;
        return s;
    }
};

// One allocation on each path in turn, `times` over, 10 ns apart after `ts`; the last one's time.
uint64_t in_turn(LoopFinder& f, int times,
                 std::initializer_list<const std::vector<uint32_t>*> paths, uint64_t ts = 0) {
    for (int i = 0; i < times; ++i)
        for (const std::vector<uint32_t>* path : paths)
            f.on_alloc(1, ts += 10, *path);
    return ts;
}

TEST(LoopFinder, OneLoopWithTwoAllocationsPerIteration) {
    Program p;
    p.chains = {{{"train", 11}, {10}}, {{"train", 12}, {10}}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto x = p.path({{"main", 50}, {"train", 11}});
    auto y = p.path({{"main", 50}, {"train", 12}});
    uint64_t ts = in_turn(f, 10, {&x, &y});
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(loops[0].iterations(), 10u);
    EXPECT_EQ(loops[0].starts.front(), 10u); // the first entry into the head
    EXPECT_EQ(loops[0].loop_line, 10);
    EXPECT_TRUE(loops[0].runs_to_end);
    EXPECT_EQ(f.loop_of(1, x), 0);
    EXPECT_EQ(f.loop_of(1, y), 0);
    EXPECT_EQ(f.loop_of(1, p.path({{"main", 60}})), -1);
}

TEST(LoopFinder, FunctionCalledAgainByTheCallersLoopIsTheCallersLoop) {
    // for batch in loader: step(batch)   -- step allocates at two lines, has no loop itself
    Program p;
    p.loop_lines = {{"main", 32}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto a = p.path({{"main", 32}, {"step", 5}});
    auto b = p.path({{"main", 32}, {"step", 6}});
    auto after = p.path({{"main", 40}});
    uint64_t ts = in_turn(f, 6, {&a, &b});
    f.on_alloc(1, ts += 10, after);
    auto loops = f.finish(ts + 100);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(p.calls[loops[0].head].function_name, "main");
    EXPECT_EQ(p.calls[loops[0].head].line, 32);
    EXPECT_EQ(loops[0].iterations(), 6u);
    EXPECT_FALSE(loops[0].runs_to_end);
    EXPECT_EQ(loops[0].end_ts, ts); // left when `after` was allocated
    EXPECT_EQ(f.loop_of(1, a), 0);
    EXPECT_EQ(f.loop_of(1, after), -1);
}

TEST(LoopFinder, TheSameCallAgainIsAnIteration) {
    // for i in range(n): keep.append(make())  -- make() a helper without a loop
    Program p;
    p.loop_lines = {{"train", 20}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto a = p.path({{"main", 1}, {"train", 20}, {"make", 5}}, true);
    uint64_t ts = 0;
    for (int i = 0; i < 7; ++i)
        f.on_alloc(1, ts += 10, a);
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(p.calls[loops[0].head].function_name, "train");
    EXPECT_EQ(loops[0].iterations(), 7u);
}

TEST(LoopFinder, TheLoopAStatementRunsIsTheLoopOfWhatItAllocatesBetweenTheSteps) {
    // for ...: total = sum(model(x) for x in xs)  -- the generator's loop runs under sum(), a
    // builtin called from the statement's frame; sum's additions are allocated under that frame
    // too, between the generator's steps, in no loop of their own.
    Program p;
    p.loop_lines = {{"<genexpr>", 30}, {"train", 30}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto statement = p.path({{"main", 1}, {"train", 30}});
    auto step = p.under(
        statement, {{"builtin_sum", 0, false}, {"<genexpr>", 30, true}, {"forward", 7, false}});
    auto add = p.under(
        statement,
        {{"builtin_sum", 0, false}, {"number_add", 0, false}, {"Tensor.__add__", 9, false}});
    auto elsewhere = p.path({{"main", 1}, {"train", 31}}, true);
    uint64_t ts = 0;
    f.on_alloc(1, ts += 10, step);
    for (int i = 0; i < 5; ++i) {
        f.on_alloc(1, ts += 10, step);
        f.on_alloc(1, ts += 10, add);
    }
    f.on_alloc(1, ts += 10, elsewhere);
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(p.calls[loops[0].head].function_name, "<genexpr>");
    EXPECT_EQ(loops[0].iterations(), 6u);
    EXPECT_EQ(f.loop_of(1, step), 0);
    EXPECT_EQ(f.loop_of(1, add), -1); // in no loop of its own frames
    EXPECT_EQ(f.loop_run_by(1, add), 0);
    EXPECT_EQ(f.loop_run_by(1, elsewhere), -1); // another statement of the same frame
    EXPECT_EQ(f.loop_run_by(1, step), 0);       // its own, from the statement's frame
    EXPECT_EQ(f.loop_run_by(2, add), -1);       // another thread's
}

TEST(LoopFinder, AGeneratorExpressionResumedIsTheNextStepOfItsLoop) {
    // outs = list(map(lambda x: model(x), (load(b) for b in batches)))  -- map() resumes the
    // generator, then calls the lambda: the generator never allocates twice in a row.
    Program p;
    p.loop_lines = {{"<genexpr>", 30}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto statement = p.path({{"main", 1}, {"evaluate", 30}});
    auto load = p.under(statement, {{"map_next", 0, false},
                                    {"gen_send", 0, false},
                                    {"evaluate.<locals>.<genexpr>", 30, true},
                                    {"load", 9, false}});
    auto call = p.under(statement, {{"map_next", 0, false},
                                    {"call_function", 0, false},
                                    {"evaluate.<locals>.<lambda>", 30, true},
                                    {"forward", 7, false}});
    uint64_t ts = 0;
    for (int i = 0; i < 6; ++i) {
        f.on_alloc(1, ts += 10, load);
        f.on_alloc(1, ts += 10, call);
    }
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(p.calls[loops[0].head].function_name, "evaluate.<locals>.<genexpr>");
    EXPECT_EQ(loops[0].iterations(), 6u);
    EXPECT_EQ(loops[0].starts.front(), 10u); // its first step's allocation
    EXPECT_EQ(f.loop_of(1, load), 0);
    EXPECT_EQ(f.loop_of(1, call), -1);
    // The lambda is the program's frame further in than the statement that runs the loop.
    EXPECT_EQ(f.loop_run_by(1, call), 0);
}

TEST(LoopFinder, BranchesInsideALibraryAreOneCallNotALoop) {
    // output = model(x): one user line, two allocations on different library lines.
    Program p;
    p.loop_lines = {{"train", 12}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto first = p.path({{"train", 12}});
    first.push_back(
        p.calls.node(first.back(), "forward", "/site-packages/m.py", 3, 3, true, false));
    auto second = p.path({{"train", 12}});
    second.push_back(
        p.calls.node(second.back(), "forward", "/site-packages/m.py", 4, 4, true, false));
    f.on_alloc(1, 10, first);
    f.on_alloc(1, 20, second);
    EXPECT_TRUE(f.finish(30).empty());
}

TEST(LoopFinder, NestedLoopsEachGetTheirOwnIterations) {
    // for fold (line 2): build() (line 3); for batch (line 4): step() (line 5)
    Program p;
    p.chains = {{{"main", 3}, {2}}, {{"main", 5}, {4, 2}}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto build = p.path({{"main", 3}});
    auto step = p.path({{"main", 5}, {"step", 9}});
    uint64_t ts = 0;
    for (int fold = 0; fold < 4; ++fold) {
        f.on_alloc(1, ts += 10, build);
        for (int b = 0; b < 6; ++b)
            f.on_alloc(1, ts += 10, step);
    }
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 2u);
    int64_t outer = f.loop_of(1, build), inner = f.loop_of(1, step);
    ASSERT_GE(outer, 0);
    ASSERT_GE(inner, 0);
    EXPECT_NE(outer, inner);
    EXPECT_EQ(loops[outer].iterations(), 4u);
    EXPECT_EQ(loops[inner].iterations(), 24u);
}

// for step (line 2): for rep (line 3): x (4) where `at_4(rep)`, model(x) (5); noise (6). Five
// steps of `reps` repetitions; the loops found, and those holding lines 4, 5 and 6.
struct StepsOfReps {
    std::vector<Loop> loops;
    int64_t at_4 = -1, reps = -1, steps = -1;
};
StepsOfReps steps_of_reps(int reps, bool (*at_4)(int rep)) {
    Program p;
    p.chains = {{{"main", 4}, {3, 2}}, {{"main", 5}, {3, 2}}, {{"main", 6}, {2}}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto x = p.path({{"main", 4}}), out = p.path({{"main", 5}}), noise = p.path({{"main", 6}});
    uint64_t ts = 0;
    for (int step = 0; step < 5; ++step) {
        for (int rep = 0; rep < reps; ++rep) {
            if (at_4(rep)) f.on_alloc(1, ts += 10, x);
            f.on_alloc(1, ts += 10, out);
        }
        f.on_alloc(1, ts += 10, noise);
    }
    StepsOfReps found;
    found.loops = f.finish(ts + 1);
    found.at_4 = f.loop_of(1, x);
    found.reps = f.loop_of(1, out);
    found.steps = f.loop_of(1, noise);
    return found;
}

TEST(LoopFinder, NestedLoopsWithTheSameFirstAllocationAreToldApartByTheirStatements) {
    StepsOfReps found = steps_of_reps(3, [](int) { return true; });
    const auto& loops = found.loops;
    ASSERT_EQ(loops.size(), 2u);
    int64_t reps = found.at_4, steps = found.steps;
    ASSERT_GE(reps, 0);
    ASSERT_GE(steps, 0);
    EXPECT_NE(reps, steps);
    EXPECT_EQ(loops[reps].loop_line, 3);
    EXPECT_EQ(loops[reps].iterations(), 15u);
    // Each step's first repetition begins a run of the inner loop.
    EXPECT_EQ(loops[reps].run_starts, (std::vector<uint32_t>{1, 4, 7, 10, 13}));
    EXPECT_EQ(loops[steps].loop_line, 2);
    EXPECT_EQ(loops[steps].iterations(), 5u);
    EXPECT_EQ(found.reps, reps);
}

TEST(LoopFinder, ACallUnderAnIfIsAnotherPlaceOfTheSameLoop) {
    // for i (line 7): if (i % 100 == 0) keep() (line 8); work() (line 9)
    Program p;
    p.chains = {{{"main", 8}, {7}}, {{"main", 9}, {7}}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto keep = p.path({{"main", 8}, {"keep", 3}});
    auto work = p.path({{"main", 9}, {"work", 4}});
    uint64_t ts = 0;
    std::vector<uint64_t> expected_starts;
    for (int i = 0; i < 1000; ++i) {
        expected_starts.push_back(ts + 10);
        if (i % 100 == 0) f.on_alloc(1, ts += 10, keep);
        f.on_alloc(1, ts += 10, work);
    }
    auto loops = f.finish(ts + 1);
    // One loop of 1 000 iterations, not a second one of the 10 that call keep().
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(loops[0].loop_line, 7);
    EXPECT_EQ(loops[0].starts, expected_starts); // each keep() in the iteration it is part of
    EXPECT_EQ(loops[0].run_starts, (std::vector<uint32_t>{1}));
    EXPECT_EQ(p.calls[loops[0].head].line, 8); // the first place of the body
    EXPECT_EQ(f.loop_of(1, keep), 0);
    EXPECT_EQ(f.loop_of(1, work), 0);
}

// GCC -O2 lays the loop above out as: work() (line 9) at 0x1b5, then, for the rare iteration,
// keep() (line 8) at 0x1d3 and a copy of work() at 0x1dc: keep() comes after the work() before
// it in addresses, but before it in the statements.
TEST(LoopFinder, AnOptimizedLoopRunsInTheOrderOfItsStatementsNotOfItsAddresses) {
    Program p;
    p.chains = {{{"main", 8}, {7}}, {{"main", 9}, {7}}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto keep = p.native({{"main", 8, 0x1d3}, {"keep", 3, 0x40}});
    auto work_after_keep = p.native({{"main", 9, 0x1dc}, {"work", 4, 0x60}});
    auto work = p.native({{"main", 9, 0x1b5}, {"work", 4, 0x60}});
    uint64_t ts = 0;
    std::vector<uint64_t> expected_starts;
    for (int i = 0; i < 1000; ++i) {
        expected_starts.push_back(ts + 10);
        if (i % 100 == 0) {
            f.on_alloc(1, ts += 10, keep);
            f.on_alloc(1, ts += 10, work_after_keep);
        } else {
            f.on_alloc(1, ts += 10, work);
        }
    }
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(loops[0].loop_line, 7);
    EXPECT_EQ(loops[0].starts, expected_starts);
    EXPECT_EQ(p.calls[loops[0].head].line, 8); // the first statement of the body
    EXPECT_EQ(f.loop_of(1, keep), 0);
    EXPECT_EQ(f.loop_of(1, work_after_keep), 0);
    EXPECT_EQ(f.loop_of(1, work), 0);
}

// A rotated loop (for, line 10: x = alloc() (11); y = forward(x) (12); noise() (14)) whose last
// statement the compiler placed first: each iteration begins at line 11, and its body holds
// line 14, below the addresses of the others.
TEST(LoopFinder, ARotatedLoopBeginsEachIterationAtItsFirstStatement) {
    Program p;
    p.chains = {{{"train", 11}, {10}}, {{"train", 12}, {10}}, {{"train", 14}, {10}}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto x = p.native({{"main", 50, 0x900}, {"train", 11, 0x300}});
    auto y = p.native({{"main", 50, 0x900}, {"train", 12, 0x310}, {"forward", 3, 0x80}});
    auto noise = p.native({{"main", 50, 0x900}, {"train", 14, 0x100}, {"noise", 5, 0x70}});
    uint64_t ts = 0;
    std::vector<uint64_t> expected_starts;
    for (int i = 0; i < 20; ++i) {
        expected_starts.push_back(ts + 10);
        f.on_alloc(1, ts += 10, x);
        f.on_alloc(1, ts += 10, y);
        f.on_alloc(1, ts += 10, noise);
    }
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(loops[0].loop_line, 10);
    EXPECT_EQ(loops[0].starts, expected_starts);
    EXPECT_EQ(p.calls[loops[0].head].line, 11);
    EXPECT_EQ(f.loop_of(1, x), 0);
    EXPECT_EQ(f.loop_of(1, y), 0);
    EXPECT_EQ(f.loop_of(1, noise), 0);
}

// step() has no loop; its two statements (lines 5 and 6) are laid out backwards. Going back to
// line 5 is step() called again, by the loop around its call (main, line 20).
TEST(LoopFinder, AFunctionCalledAgainIsToldByItsStatementsWhereItsAddressesAreOutOfOrder) {
    Program p;
    p.loop_lines = {{"main", 20}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto a = p.native({{"main", 20, 0x500}, {"step", 5, 0x90}});
    auto b = p.native({{"main", 20, 0x500}, {"step", 6, 0x20}});
    uint64_t ts = in_turn(f, 8, {&a, &b});
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(p.calls[loops[0].head].function_name, "main");
    EXPECT_EQ(loops[0].iterations(), 8u);
    EXPECT_EQ(f.loop_of(1, a), 0);
    EXPECT_EQ(f.loop_of(1, b), 0);
}

// for (line 20): step() (allocates at its line 5, then ends in `return update();`, a tail call:
// update's allocation at its line 7 has no frame of step under main's line 20).
TEST(LoopFinder, ATailCallIsTheSameIterationNotTheCallRunningAgain) {
    Program p;
    p.loop_lines = {{"main", 20}};
    auto step = p.native({{"main", 20, 0x500}, {"step", 5, 0x90}});
    auto update = p.native({{"main", 20, 0x500}, {"update", 7, 0x30}});
    auto run = [&](bool told) {
        LoopFinder f(p.calls, &Program::oracle, &p);
        if (told)
            f.set_tail_calls(
                [](const CallNode& call, const CallNode& caller, const CallNode& callee, void*) {
                    // Asked about the frames under main's call, in the order they came.
                    return call.function_name == "main" && caller.function_name == "step" &&
                           callee.function_name == "update";
                },
                nullptr);
        uint64_t ts = in_turn(f, 8, {&step, &update});
        auto loops = f.finish(ts + 1);
        EXPECT_EQ(loops.size(), 1u);
        EXPECT_EQ(f.loop_of(1, step), 0);
        EXPECT_EQ(f.loop_of(1, update), 0);
        return loops.empty() ? 0u : loops[0].iterations();
    };
    EXPECT_EQ(run(true), 8u);
    EXPECT_EQ(run(false), 16u); // without the DWARF that says so: each call counted
}

TEST(LoopFinder, ACallUnderAnIfInAnInnerLoopKeepsBothLoopsRuns) {
    // Line 4 only in odd repetitions: those go back to line 4, the others to line 5.
    StepsOfReps found = steps_of_reps(4, [](int rep) { return rep % 2 == 1; });
    const auto& loops = found.loops;
    ASSERT_EQ(loops.size(), 2u);
    int64_t reps = found.reps, steps = found.steps;
    ASSERT_GE(reps, 0);
    ASSERT_GE(steps, 0);
    EXPECT_NE(reps, steps);
    EXPECT_EQ(found.at_4, reps);
    EXPECT_EQ(loops[reps].loop_line, 3);
    EXPECT_EQ(loops[reps].iterations(), 20u);
    EXPECT_EQ(loops[reps].run_starts, (std::vector<uint32_t>{1, 5, 9, 13, 17}));
    EXPECT_EQ(loops[steps].iterations(), 5u);
}

TEST(LoopFinder, ThreadsHaveTheirOwnLoops) {
    Program p;
    p.chains = {{{"worker", 4}, {3}}, {{"worker", 5}, {3}}};
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto a = p.path({{"worker", 4}}), b = p.path({{"worker", 5}});
    uint64_t ts = 0;
    // Interleaved in time: what matters is each thread's own sequence.
    for (int i = 0; i < 5; ++i)
        for (uint32_t t : {1u, 2u}) {
            f.on_alloc(t, ts += 1, a);
            f.on_alloc(t, ts += 1, b);
        }
    f.on_alloc(3, ts += 1, a);
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 2u);
    EXPECT_EQ(loops[0].iterations(), 5u);
    EXPECT_EQ(loops[1].iterations(), 5u);
    EXPECT_NE(loops[0].thread, loops[1].thread);
    EXPECT_EQ(f.loop_of(3, a), -1);
}

TEST(LoopFinder, WithoutSourceARestartCountsForTheCallerToo) {
    Program p;
    p.source_known = false;
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto a = p.path({{"main", 32}, {"step", 5}});
    auto b = p.path({{"main", 32}, {"step", 6}});
    auto other = p.path({{"main", 34}});
    uint64_t ts = 0;
    for (int i = 0; i < 6; ++i) {
        f.on_alloc(1, ts += 10, a);
        f.on_alloc(1, ts += 10, b);
        if (i % 2 == 0) f.on_alloc(1, ts += 10, other);
    }
    auto loops = f.finish(ts + 1);
    // step's own "loop" and main's, which also holds the allocations at line 34.
    int64_t at_34 = f.loop_of(1, other);
    ASSERT_GE(at_34, 0);
    EXPECT_EQ(p.calls[loops[at_34].head].function_name, "main");
    EXPECT_EQ(loops[at_34].iterations(), 6u);
}

TEST(LoopFinder, WithoutSourceTheSameStackAgainIsOneLoopNotOnePerCaller) {
    // A library's thread (PyTorch's autograd engine): the same native stack for every gradient,
    // no line readable. Each restart also counts for every caller outwards; those loops have the
    // same iterations and allocations and are the one loop, listed as the innermost.
    Program p;
    p.source_known = false;
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto grad = p.native({{"clone3", 81, 0x10},
                          {"start_thread", 442, 0x20},
                          {"thread_main", 7, 0x30},
                          {"evaluate_function", 9, 0x40},
                          {"empty_cuda", 3, 0x50}});
    uint64_t ts = in_turn(f, 8, {&grad});
    auto loops = f.finish(ts + 1);
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(p.calls[loops[0].head].function_name, "empty_cuda");
    EXPECT_EQ(loops[0].iterations(), 8u);
    EXPECT_EQ(loops[0].id, 0u);
    EXPECT_EQ(f.loop_of(1, grad), 0);
}

TEST(LoopFinder, WithoutSourceACallersLoopThatHoldsMoreIsKept) {
    // As above, then the stacks part inside thread_main: its loop holds allocations that
    // evaluate_function's does not, and both stay, each with its own sites.
    Program p;
    p.source_known = false;
    LoopFinder f(p.calls, &Program::oracle, &p);
    auto grad = p.native({{"thread_main", 7, 0x30}, {"evaluate_function", 9, 0x40}});
    auto other = p.native({{"thread_main", 8, 0x38}, {"release", 4, 0x60}});
    uint64_t ts = 0;
    for (int i = 0; i < 6; ++i) {
        f.on_alloc(1, ts += 10, grad);
        if (i % 2) f.on_alloc(1, ts += 10, other);
    }
    auto loops = f.finish(ts + 1);
    int64_t of_grad = f.loop_of(1, grad), of_other = f.loop_of(1, other);
    ASSERT_GE(of_grad, 0);
    ASSERT_GE(of_other, 0);
    EXPECT_NE(of_grad, of_other);
    EXPECT_EQ(p.calls[loops[of_other].head].function_name, "thread_main");
    for (size_t i = 0; i < loops.size(); ++i)
        EXPECT_EQ(loops[i].id, i);
}

// A path named by its id reuses what was found for it while the thread's loops stay as they
// were: on random walks through nested loops, with loops found and bodies growing along the way,
// the finder given ids finds exactly what the finder without them finds.
TEST(LoopFinder, PathIdsChangeNothingFound) {
    for (bool source_known : {true, false}) {
        for (uint64_t seed = 1; seed <= 20; ++seed) {
            Program p;
            p.source_known = source_known;
            p.chains = {{{"main", 3}, {2}},      {{"main", 5}, {4, 2}}, {{"main", 6}, {4, 2}},
                        {{"main", 8}, {2}},      {{"step", 12}, {11}},  {{"step", 13}, {11}},
                        {{"step", 15}, {14, 11}}};
            std::vector<std::vector<uint32_t>> paths = {
                p.path({{"main", 3}}),
                p.path({{"main", 5}, {"step", 12}}),
                p.path({{"main", 5}, {"step", 13}}),
                p.path({{"main", 5}, {"step", 15}}, true),
                p.path({{"main", 6}, {"step", 12}}),
                p.path({{"main", 6}}),
                p.path({{"main", 8}}, true),
                p.path({{"main", 9}}),
            };
            LoopFinder named(p.calls, &Program::oracle, &p);
            LoopFinder unnamed(p.calls, &Program::oracle, &p);
            uint64_t x = seed * 0x9e3779b97f4a7c15ull, ts = 0;
            for (int i = 0; i < 400; ++i) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                // Mostly the next path in order (loops), sometimes a jump (branches, restarts).
                uint32_t id = x % 5 ? static_cast<uint32_t>(i % paths.size())
                                    : static_cast<uint32_t>((x >> 8) % paths.size());
                uint32_t thread = (x >> 20) % 3 ? 1 : 2;
                ts += 1 + (x >> 32) % 3;
                named.on_alloc(thread, ts, paths[id], id);
                unnamed.on_alloc(thread, ts, paths[id]);
            }
            std::vector<Loop> a = named.finish(ts + 1), b = unnamed.finish(ts + 1);
            SCOPED_TRACE("seed " + std::to_string(seed) + (source_known ? "" : ", no source"));
            ASSERT_EQ(a.size(), b.size());
            for (size_t k = 0; k < a.size(); ++k) {
                EXPECT_EQ(a[k].head, b[k].head);
                EXPECT_EQ(a[k].body_end_pc, b[k].body_end_pc);
                EXPECT_EQ(a[k].starts, b[k].starts);
                EXPECT_EQ(a[k].run_starts, b[k].run_starts);
                EXPECT_EQ(a[k].end_ts, b[k].end_ts);
                EXPECT_EQ(a[k].runs_to_end, b[k].runs_to_end);
                EXPECT_EQ(a[k].allocations, b[k].allocations);
            }
            for (const auto& path : paths)
                for (uint32_t thread : {1u, 2u})
                    EXPECT_EQ(named.loop_of(thread, path), unnamed.loop_of(thread, path));
            if (seed == 1 && source_known) {
                EXPECT_GE(a.size(), 2u) << "the walk must find loops";
            }
        }
    }
}

} // namespace
} // namespace gpuleak::analyzer

namespace gpuleak::analyzer {
namespace {

// The median gap of a marked loop, found digit by digit, is nth_element's on a copy of the gaps:
// gaps of every magnitude (up to 2^63), ties, two starts, and a few million of them.
TEST(MedianGap, IsTheGapNthElementPutsInTheMiddle) {
    auto reference = [](const std::vector<uint64_t>& starts) {
        std::vector<uint64_t> gaps;
        for (size_t i = 1; i < starts.size(); ++i)
            gaps.push_back(starts[i] - starts[i - 1]);
        std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
        return gaps[gaps.size() / 2];
    };
    std::mt19937_64 random(15);
    for (int round = 0; round < 300; ++round) {
        size_t n = 2 + random() % (round < 200 ? 12 : 3000);
        int bits = 1 + static_cast<int>(random() % 62);
        std::vector<uint64_t> starts{random() >> 2};
        for (size_t i = 1; i < n; ++i) {
            uint64_t gap = random() % 4 == 0 ? 7 : random() >> (64 - bits); // ties, often
            starts.push_back(starts.back() + gap);
        }
        ASSERT_EQ(median_gap(starts), reference(starts)) << "round " << round;
    }
    std::vector<uint64_t> many;
    for (uint64_t i = 0, t = 0; i < 3'000'001; ++i)
        many.push_back(t += 1'000'000 + (i * 7919) % 65536);
    EXPECT_EQ(median_gap(many), reference(many));
    EXPECT_EQ(median_gap({5, 9}), 4u);
    EXPECT_EQ(median_gap({0, uint64_t{1} << 63}), uint64_t{1} << 63);
}

} // namespace
} // namespace gpuleak::analyzer
