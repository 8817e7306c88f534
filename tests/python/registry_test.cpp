// The code registry's identity rules, and the small parsers the detection relies on.
#include <gtest/gtest.h>

#include <set>

#include "code_registry.h"
#include "version.h"

namespace py = gpuleak::python;

TEST(CodeRegistry, SameCodeObjectKeepsItsId) {
    py::CodeRegistry r;
    bool fresh = false;
    py::CodeKey key{0x10000, 0x2000, 0x3000, 0x4000, 7, 0};
    uint64_t id = r.resolve(key, fresh);
    EXPECT_EQ(id, 1u);
    EXPECT_TRUE(fresh);
    EXPECT_EQ(r.resolve(key, fresh), id);
    EXPECT_FALSE(fresh);
    r.clear();
}

TEST(CodeRegistry, ReusedAddressWithOtherContentGetsANewId) {
    py::CodeRegistry r;
    bool fresh = false;
    uint64_t a = r.resolve({0x10000, 0x2000, 0x3000, 0x4000, 7, 0}, fresh);
    uint64_t b = r.resolve({0x10000, 0x2000, 0x3000, 0x4000, 8, 0}, fresh); // firstlineno differs
    EXPECT_TRUE(fresh);
    uint64_t c = r.resolve({0x10000, 0x2000, 0x3008, 0x4000, 8, 0}, fresh); // qualname differs
    EXPECT_TRUE(fresh);
    uint64_t d = r.resolve({0x10000, 0x2000, 0x3008, 0x4000, 8, 1}, fresh); // content differs
    EXPECT_TRUE(fresh);
    EXPECT_EQ(std::set<uint64_t>({a, b, c, d}).size(), 4u);
    EXPECT_EQ(r.size(), 1u);
    r.clear();
}

TEST(CodeRegistry, GrowsAndIdsNeverRepeatAcrossClear) {
    py::CodeRegistry r;
    std::set<uint64_t> ids;
    bool fresh = false;
    for (uintptr_t i = 1; i <= 20000; ++i) {
        ids.insert(r.resolve({i * 16, i, i, i, 1, 0}, fresh));
        ASSERT_TRUE(fresh);
    }
    for (uintptr_t i = 1; i <= 20000; ++i) {
        ASSERT_EQ(r.resolve({i * 16, i, i, i, 1, 0}, fresh), i);
        ASSERT_FALSE(fresh);
    }
    r.clear();
    EXPECT_EQ(r.size(), 0u);
    uint64_t after = r.resolve({16, 1, 1, 1, 1, 0}, fresh);
    EXPECT_TRUE(fresh);
    EXPECT_FALSE(ids.count(after));
    r.clear();
}

TEST(Version, ParsesPyGetVersionText) {
    EXPECT_EQ(py::parse_version("3.10.13 (main, Jan  1 2024, 00:00:00) [GCC 12.2.0]"), 0x030a0df0u);
    EXPECT_EQ(py::parse_version("3.9.18 (main)"), 0x030912f0u);
    EXPECT_EQ(py::parse_version("3.10.0rc1 (default)"), 0x030a00c1u);
    EXPECT_EQ(py::parse_version("3.14.0a3"), 0x030e00a3u);
    EXPECT_EQ(py::parse_version("3.9.2+ (default)"), 0x030902f0u);
    EXPECT_EQ(py::parse_version("garbage"), 0u);
    EXPECT_EQ(py::parse_version(nullptr), 0u);
}
