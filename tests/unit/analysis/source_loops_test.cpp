// Whether a source line sits inside a loop statement, read from real files.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "model/source_files.h"

namespace gpuleak::analyzer {
namespace {

std::string write(const std::string& name, const std::string& text) {
    std::string path = testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

TEST(SourceLoops, Python) {
    std::string f = write("loops.py", R"(def train(loader):
    model = build()
    for batch in loader:
        x = load(batch)

        out = model(
            x)
    evaluate()
    outs = [model(b) for b in loader]


def step(x):
    return helper(x)
)");
    SourceFiles files;
    EXPECT_EQ(files.enclosing_loop(f, 2, true).context, LoopContext::NotInLoop);
    LoopStatement in = files.enclosing_loop(f, 4, true);
    EXPECT_EQ(in.context, LoopContext::InLoop);
    EXPECT_EQ(in.line, 3);
    EXPECT_EQ(files.enclosing_loop(f, 7, true).line, 3); // a continuation line
    EXPECT_EQ(files.enclosing_loop(f, 8, true).context, LoopContext::NotInLoop);
    EXPECT_EQ(files.enclosing_loop(f, 9, true).context, LoopContext::InLoop);
    EXPECT_EQ(files.enclosing_loop(f, 13, true).context, LoopContext::NotInLoop);
    EXPECT_EQ(files.enclosing_loop("/nonexistent.py", 3, true).context, LoopContext::Unknown);
    EXPECT_EQ(files.enclosing_loop(f, 99, true).context, LoopContext::Unknown);
}

TEST(SourceLoops, CAndCxx) {
    std::string f = write("loops.cpp", R"(int main() {
    setup();
    for (int i = 0; i < n; ++i)
        body(), keep(make());
    for (auto& a : acts) a = alloc();
    if (x) {
        one();  // for (fake) in a comment
    }
    while (running) {
        if (ready) {
            work("{ not a brace");
        }
    }
    do {
        again();
    } while (more);
    return 0;
}
)");
    SourceFiles files;
    EXPECT_EQ(files.enclosing_loop(f, 2, false).context, LoopContext::NotInLoop);
    EXPECT_EQ(files.enclosing_loop(f, 4, false).line, 3);
    EXPECT_EQ(files.enclosing_loop(f, 5, false).context, LoopContext::InLoop);
    EXPECT_EQ(files.enclosing_loop(f, 7, false).context, LoopContext::NotInLoop);
    EXPECT_EQ(files.enclosing_loop(f, 11, false).line, 9);
    EXPECT_EQ(files.enclosing_loop(f, 15, false).line, 14);
    EXPECT_EQ(files.enclosing_loop(f, 17, false).context, LoopContext::NotInLoop);
}

} // namespace
} // namespace gpuleak::analyzer
