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

} // namespace
} // namespace gpuleak::analyzer
