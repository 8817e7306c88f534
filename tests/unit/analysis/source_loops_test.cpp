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

// The line each position's statement begins on: the order statements run in, which an optimized
// binary's addresses need not keep.
TEST(SourceLoops, CStatementsBeginWhereTheirFirstLineIs) {
    std::string f = write("statements.c", R"(void step(int i) {
    void *x = alloc(n);
    if (i % 1000 == 0)
        keep();
    total += f(x,
               g(x));
    a(); b();
    while ((batch = next())) {
        train(batch);
    }
    do {
        again();
    } while (more());
}
)");
    SourceFiles files;
    EXPECT_EQ(files.enclosing_loop(f, 2, false).statement, 2); // first after the brace
    EXPECT_EQ(files.enclosing_loop(f, 4, false).statement, 3); // an unbraced `if` body
    EXPECT_EQ(files.enclosing_loop(f, 5, false).statement, 5);
    EXPECT_EQ(files.enclosing_loop(f, 6, false).statement, 5); // a continuation line
    EXPECT_EQ(files.enclosing_loop(f, 7, false).statement, 7); // two on a line: the first
    EXPECT_EQ(files.enclosing_loop(f, 8, false).statement, 8); // a loop's condition
    EXPECT_EQ(files.enclosing_loop(f, 9, false).statement, 9); // its body, after the brace
    EXPECT_EQ(files.enclosing_loop(f, 12, false).statement, 12);
    EXPECT_EQ(files.enclosing_loop(f, 13, false).statement, 13); // `} while (...)`
    // Python's statements are not read: its positions are already in the source's order.
    std::string py = write("statements.py", "for i in range(3):\n    f(i)\n");
    EXPECT_EQ(files.enclosing_loop(py, 2, true).statement, 0);
}

} // namespace
} // namespace gpuleak::analyzer
