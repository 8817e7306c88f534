// fingerprint(): what tells two code objects at the same address apart.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fake_code.h"
#include "fingerprint.h"
#include "layout.h"
#include "version_tables.h"

namespace py = gpuleak::python;
using gpuleak::python::fakes::FakeCode;

TEST(Fingerprint, WithoutCoVersionTheLineTableAndNameDecide) {
    py::Layout l;
    ASSERT_TRUE(py::table_layout(0x030b07f0, l)); // 3.11
    FakeCode c(l, 1234, "\x80\x01\x80\x02\x80\x03 a table of forty bytes or so....");
    py::CodeKey before = c.key();
    EXPECT_EQ(before, c.key());
    c.set_table("\x80\x01\x80\x02\x80\x04 a table of forty bytes or so....");
    EXPECT_NE(before, c.key()) << "same pointers, one byte of the table differs";
    FakeCode d(l, 1234, "x");
    py::CodeKey dk = d.key();
    FakeCode::put(d.name, l.str_length + 8, int64_t{5678});
    EXPECT_NE(dk, d.key()) << "same pointers, the name's hash differs";
}

TEST(Fingerprint, CoVersionDecidesFrom312) {
    py::Layout l;
    ASSERT_TRUE(py::table_layout(0x030c01f0, l));
    FakeCode c(l, 1, "same table, same table");
    FakeCode::put(c.code, static_cast<uint32_t>(l.co_version), uint32_t{41});
    py::CodeKey before = c.key();
    FakeCode::put(c.code, static_cast<uint32_t>(l.co_version), uint32_t{42});
    EXPECT_NE(before, c.key());
    // A run-out counter (0) falls back to the line table's size and end words.
    FakeCode::put(c.code, static_cast<uint32_t>(l.co_version), uint32_t{0});
    py::CodeKey zero = c.key();
    c.set_table("same table, same tablf");
    EXPECT_NE(zero, c.key());
}

// The thread cache's check without a digest: a slot's copy of what fingerprint() digests matches
// exactly when the digest would (for the bytes it reads), so a hit never hides a changed table.
TEST(Fingerprint, ContentCopyMatchesWhereTheDigestDoes) {
    py::Layout l;
    ASSERT_TRUE(py::table_layout(0x030b07f0, l)); // 3.11
    ASSERT_TRUE(py::digests_content(l));
    std::string tables[] = {"", "short", std::string(128, 'a'), std::string(200, 'b')};
    for (const std::string& table : tables) {
        SCOPED_TRACE("line table of " + std::to_string(table.size()) + " bytes");
        FakeCode c(l, 1234, table.c_str());
        auto code = reinterpret_cast<uintptr_t>(c.code);
        auto qualname = reinterpret_cast<uintptr_t>(c.name);
        auto linetable = reinterpret_cast<uintptr_t>(c.table);
        py::CodeCache::Slot slot{};
        py::copy_content(l, qualname, linetable, slot);
        py::CodeKey stored = py::fingerprint(l, code);
        EXPECT_TRUE(py::same_content(l, qualname, linetable, slot));
        // Every single-byte change of the table: the copy and the digest agree on "changed".
        for (size_t i = 0; i < table.size(); ++i) {
            unsigned char& byte = c.table[l.bytes_sval + i];
            byte ^= 1;
            bool same = py::same_content(l, qualname, linetable, slot);
            EXPECT_EQ(same, py::fingerprint(l, code) == stored) << "byte " << i;
            // Up to 128 bytes the digest reads all; beyond, the first and last 64.
            EXPECT_EQ(same, table.size() > 128 && i >= 64 && i < table.size() - 64) << "byte " << i;
            byte ^= 1;
        }
        FakeCode::put(c.name, l.str_length + 8, int64_t{99});
        EXPECT_FALSE(py::same_content(l, qualname, linetable, slot)) << "the name's hash";
        FakeCode::put(c.name, l.str_length + 8, int64_t{1234});
        FakeCode::put(c.table, l.var_size, static_cast<int64_t>(table.size()) + 1);
        EXPECT_FALSE(py::same_content(l, qualname, linetable, slot)) << "the table's size";
    }
    ASSERT_TRUE(py::table_layout(0x030c01f0, l));
    EXPECT_FALSE(py::digests_content(l)) << "3.12+ identify code objects by co_version";
}
