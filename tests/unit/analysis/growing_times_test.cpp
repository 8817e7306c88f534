// GrowingTimes: the array of times that grows without copying (analyzer/common/growing_times.h).
#include <gtest/gtest.h>

#include <numeric>

#include "common/growing_times.h"

namespace gpuleak::analyzer {
namespace {

// Through the vector part and two and a half mapped chunks: every time where it was put, in
// order when taken, and the array empty and usable again after.
TEST(GrowingTimes, HoldsAndHandsOverEveryTimeInOrder) {
    const size_t n = GrowingTimes::kFirst + GrowingTimes::kChunk * 5 / 2;
    GrowingTimes times;
    EXPECT_TRUE(times.empty());
    for (size_t i = 0; i < n; ++i) {
        times.push_back(3 * i + 1);
        ASSERT_EQ(times.back(), 3 * i + 1);
    }
    ASSERT_EQ(times.size(), n);
    for (size_t i : {size_t{0}, GrowingTimes::kFirst - 1, GrowingTimes::kFirst,
                     GrowingTimes::kFirst + GrowingTimes::kChunk - 1,
                     GrowingTimes::kFirst + GrowingTimes::kChunk, n - 1})
        EXPECT_EQ(times[i], 3 * i + 1) << "at " << i;

    GrowingTimes moved = std::move(times);
    EXPECT_TRUE(times.empty());
    std::vector<uint64_t> taken = moved.take();
    ASSERT_EQ(taken.size(), n);
    for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(taken[i], 3 * i + 1) << "at " << i;
    EXPECT_TRUE(moved.empty());
    moved.push_back(7);
    EXPECT_EQ(moved.take(), std::vector<uint64_t>{7});
}

TEST(GrowingTimes, ASmallArrayIsOnlyItsVector) {
    GrowingTimes times;
    for (uint64_t t : {5, 9, 9, 12})
        times.push_back(t);
    EXPECT_EQ(times.take(), (std::vector<uint64_t>{5, 9, 9, 12}));
    EXPECT_TRUE(GrowingTimes().take().empty());
}

} // namespace
} // namespace gpuleak::analyzer
