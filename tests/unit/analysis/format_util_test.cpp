// The numbers a report prints: sizes and the growth of a site per iteration.
#include <gtest/gtest.h>

#include "common/format_util.h"

namespace gpuleak::analyzer {
namespace {

TEST(GrowthRate, PerIterationFromAByteUp) {
    EXPECT_EQ(growth_rate(1000), "+1000 B/iteration");
    EXPECT_EQ(growth_rate(1.6 * 1024 * 1024), "+1.60 MiB/iteration");
    EXPECT_EQ(growth_rate(1), "+1 B/iteration");
    EXPECT_EQ(growth_rate(0), "+0 B/iteration");
    EXPECT_EQ(growth_rate(-5), "+0 B/iteration"); // a fit's slope can dip below 0
}

// A buffer of 64 bytes kept every thousandth iteration is a leak of 0.064 bytes an iteration:
// said over enough iterations to show it, never as "+0 B".
TEST(GrowthRate, UnderAByteOverAPowerOfTenOfIterations) {
    EXPECT_EQ(growth_rate(0.064), "+64 B per 1,000 iterations");
    EXPECT_EQ(growth_rate(0.5), "+50 B per 100 iterations");
    EXPECT_EQ(growth_rate(0.999), "+100 B per 100 iterations");
    EXPECT_EQ(growth_rate(2048.0 / 1e6), "+20 B per 10,000 iterations");
    EXPECT_EQ(growth_rate(1e-12), "+0 B per 1,000,000,000 iterations");
}

// Names in labels: a C++ function without its parameters and qualifiers, its operator's name
// kept; C and Python names as they are.
TEST(FunctionNames, WithoutParameters) {
    EXPECT_EQ(without_parameters("ns::f(int, char const*)"), "ns::f");
    EXPECT_EQ(without_parameters("(anonymous namespace)::forward(unsigned long)"),
              "(anonymous namespace)::forward");
    EXPECT_EQ(without_parameters("S::operator()(int) const"), "S::operator()");
    EXPECT_EQ(without_parameters("callbacks()::{lambda(int)#2}::operator()(int) const &&"),
              "callbacks()::{lambda(int)#2}::operator()");
    EXPECT_EQ(without_parameters("S::operator()"), "S::operator()"); // DWARF's name
    EXPECT_EQ(without_parameters("std::function<void (int)>::operator()(int) const"),
              "std::function<void (int)>::operator()");
    EXPECT_EQ(without_parameters("void std::_Construct<Buffer, int>(Buffer*, int&&)"),
              "void std::_Construct<Buffer, int>");
    EXPECT_EQ(without_parameters("keep_output"), "keep_output");
    EXPECT_EQ(without_parameters("(int)"), "(int)");
    EXPECT_EQ(without_parameters("f(int"), "f(int");

    Frame cloned;
    cloned.function = "forward(unsigned long) [clone .constprop.3]";
    EXPECT_EQ(display_function(cloned), "forward");
    EXPECT_EQ(source_function(cloned), "forward(unsigned long)");
    Frame python;
    python.python = true;
    python.function = "Model.forward";
    EXPECT_EQ(display_function(python), "Model.forward");
    EXPECT_EQ(source_function(python), "Model.forward");
    EXPECT_EQ(display_function(Frame{}), "??");
}

} // namespace
} // namespace gpuleak::analyzer
