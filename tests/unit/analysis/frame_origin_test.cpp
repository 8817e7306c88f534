// Whose code a frame is, by its name, file and module.
#include <gtest/gtest.h>

#include "model/frame_origin.h"
#include "model/site_table.h"

namespace gpuleak::analyzer {
namespace {

Frame native(std::string function, std::string module) {
    Frame f;
    f.function = std::move(function);
    f.module = std::move(module);
    return f;
}

TEST(FrameOrigin, AStrippedInterpretersStaticFunctionsAreTheInterpreters) {
    // Debian's python3 has no symbols for its static functions (gen_send_ex, builtin_sum): which of
    // them a call passes through changes as CPython specializes it, and must not make a new site.
    EXPECT_EQ(classify_frame(native("", "/usr/bin/python3.11")), FrameOrigin::Interpreter);
    EXPECT_EQ(classify_frame(native("", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0")),
              FrameOrigin::Interpreter);
    EXPECT_EQ(classify_frame(native("_PyEval_EvalFrameDefault", "/usr/bin/python3.11")),
              FrameOrigin::Interpreter);
    // Other unnamed frames stay unexplained, whatever their module.
    EXPECT_EQ(classify_frame(native("", "/lib/x86_64-linux-gnu/libffi.so.8")),
              FrameOrigin::Unknown);
    EXPECT_EQ(classify_frame(native("", "/home/u/train")), FrameOrigin::Unknown);
    EXPECT_EQ(classify_frame(native("", "")), FrameOrigin::Unknown);
    // A program named like the interpreter only when the rest is a version.
    EXPECT_EQ(classify_frame(native("", "/home/u/python_tools")), FrameOrigin::Unknown);
}

TEST(FrameOrigin, PythonFramesByTheirFile) {
    Frame f;
    f.python = true;
    f.file = "/home/u/train.py";
    EXPECT_EQ(classify_frame(f), FrameOrigin::User);
    f.file = "/usr/lib/python3/dist-packages/torch/nn/modules/module.py";
    EXPECT_EQ(classify_frame(f), FrameOrigin::Library);
    f.file = "";
    EXPECT_EQ(classify_frame(f), FrameOrigin::Unknown);
}

} // namespace
} // namespace gpuleak::analyzer
