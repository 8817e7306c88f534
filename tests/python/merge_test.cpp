// merge(): Python frames replace the native eval-loop frames, group by group.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "python/merge.h"

namespace pd = gpuleak::pydecode;
using Kind = pd::MergedFrame::Kind;

namespace {

std::vector<pd::NativeFrameName> native(std::initializer_list<const char*> names) {
    std::vector<pd::NativeFrameName> out;
    uint64_t i = 0;
    for (const char* n : names)
        out.push_back({n, i++});
    return out;
}

std::vector<pd::PyFrameView> python(std::initializer_list<bool> entries) {
    std::vector<pd::PyFrameView> out;
    uint64_t id = 1;
    for (bool e : entries)
        out.push_back({id++, 0, e});
    return out;
}

// "N0 P1 ..." for compact expectations.
std::string render(const std::vector<pd::MergedFrame>& frames) {
    std::string s;
    for (const auto& f : frames) {
        if (!s.empty()) s += ' ';
        s += (f.kind == Kind::Native ? 'N' : 'P') + std::to_string(f.position);
    }
    return s;
}

} // namespace

TEST(Merge, OneFramePerEvalCall) {
    // 3.9/3.10: every Python frame is its own eval call.
    auto n = native({"cudaMalloc", "hook", "_PyEval_EvalFrameDefault", "_PyFunction_Vectorcall",
                     "_PyEval_EvalFrameDefault", "main"});
    auto p = python({true, true});
    bool aligned = false;
    EXPECT_EQ(render(pd::merge(n, p, &aligned)), "N0 N1 P0 N3 P1 N5");
    EXPECT_TRUE(aligned);
}

TEST(Merge, SeveralFramesPerEvalCall) {
    // 3.11+: P0..P2 run in the inner eval call (P2 entered it), P3..P4 in the outer one.
    auto n = native({"alloc", "_PyEval_EvalFrameDefault", "builtin_sorted",
                     "_PyEval_EvalFrameDefault", "Py_RunMain"});
    auto p = python({false, false, true, false, true});
    bool aligned = false;
    EXPECT_EQ(render(pd::merge(n, p, &aligned)), "N0 P0 P1 P2 N2 P3 P4 N4");
    EXPECT_TRUE(aligned);
}

TEST(Merge, ColdPartsAndTailCallHandlersCount) {
    auto n = native({"x", "_PyEval_EvalFrameDefault.cold", "y", "_TAIL_CALL_CALL_BUILTIN_FAST"});
    auto p = python({true, true});
    EXPECT_EQ(render(pd::merge(n, p)), "N0 P0 N2 P1");
    EXPECT_FALSE(pd::is_eval_frame("PyEval_EvalFrameDefault_wrapper_TAIL_CALL_"));
    EXPECT_FALSE(pd::is_eval_frame(""));
}

TEST(Merge, CountMismatchFallsBackToPythonThenNative) {
    // A stripped interpreter: no eval frame recognised.
    auto n = native({"a", "??", "b"});
    auto p = python({false, true});
    bool aligned = true;
    EXPECT_EQ(render(pd::merge(n, p, &aligned)), "P0 P1 N0 N1 N2");
    EXPECT_FALSE(aligned);
    // More eval frames than groups (e.g. a PEP 523 evaluator, or a truncated Python stack).
    auto n2 = native({"_PyEval_EvalFrameDefault", "_PyEval_EvalFrameDefault"});
    EXPECT_EQ(render(pd::merge(n2, python({true}), &aligned)), "P0 N0 N1");
    EXPECT_FALSE(aligned);
}

TEST(Merge, OutermostFrameMustCloseAGroup) {
    // Counts agree, but the last frame belongs to no eval call: the stack was truncated.
    auto n = native({"_PyEval_EvalFrameDefault", "main"});
    bool aligned = true;
    EXPECT_EQ(render(pd::merge(n, python({true, false}), &aligned)), "P0 P1 N0 N1");
    EXPECT_FALSE(aligned);
}

TEST(Merge, NoPythonFrames) {
    auto n = native({"a", "b"});
    bool aligned = false;
    EXPECT_EQ(render(pd::merge(n, {}, &aligned)), "N0 N1");
    EXPECT_TRUE(aligned);
    EXPECT_EQ(render(pd::merge({}, python({true}), &aligned)), "P0");
    EXPECT_FALSE(aligned);
}
