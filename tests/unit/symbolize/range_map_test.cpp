#include "symbolize/range_map.h"

#include <gtest/gtest.h>

namespace gpuleak::analyzer {
namespace {

int at(const RangeMap<int>& map, uint64_t addr) {
    const int* v = map.find(addr);
    return v != nullptr ? *v : 0;
}

TEST(RangeMap, HalfOpenRanges) {
    RangeMap<int> map;
    map.assign(0x100, 0x200, 1);
    EXPECT_EQ(at(map, 0xff), 0);
    EXPECT_EQ(at(map, 0x100), 1);
    EXPECT_EQ(at(map, 0x1ff), 1);
    EXPECT_EQ(at(map, 0x200), 0);
}

TEST(RangeMap, NewRangeSplitsAnOlderOneItFallsInside) {
    RangeMap<int> map;
    map.assign(0x100, 0x400, 1);
    map.assign(0x200, 0x300, 2);
    EXPECT_EQ(at(map, 0x1ff), 1);
    EXPECT_EQ(at(map, 0x200), 2);
    EXPECT_EQ(at(map, 0x2ff), 2);
    EXPECT_EQ(at(map, 0x300), 1);
    EXPECT_EQ(at(map, 0x3ff), 1);
    EXPECT_EQ(map.size(), 3u);
}

TEST(RangeMap, NewRangeTrimsAndSwallowsOlderOnes) {
    RangeMap<int> map;
    map.assign(0x100, 0x200, 1);
    map.assign(0x200, 0x280, 2);
    map.assign(0x280, 0x400, 3);
    map.assign(0x180, 0x300, 4);
    EXPECT_EQ(at(map, 0x17f), 1);
    EXPECT_EQ(at(map, 0x180), 4);
    EXPECT_EQ(at(map, 0x240), 4);
    EXPECT_EQ(at(map, 0x2ff), 4);
    EXPECT_EQ(at(map, 0x300), 3);
    EXPECT_EQ(map.size(), 3u);
}

TEST(RangeMap, SameRangeAgainReplacesTheValue) {
    RangeMap<int> map;
    map.assign(0x100, 0x200, 1);
    map.assign(0x100, 0x200, 2);
    EXPECT_EQ(at(map, 0x150), 2);
    EXPECT_EQ(map.size(), 1u);
    map.assign(0x300, 0x300, 3); // empty: ignored
    EXPECT_EQ(map.size(), 1u);
}

} // namespace
} // namespace gpuleak::analyzer
