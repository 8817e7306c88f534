// fingerprint(): what tells two code objects at the same address apart.
#include <gtest/gtest.h>

#include <cstring>

#include "fingerprint.h"
#include "layout.h"

namespace py = gpuleak::python;

namespace {

// A code object with a name and a line table, in the given version's layout.
struct FakeCode {
    alignas(16) unsigned char code[512] = {};
    alignas(16) unsigned char name[64] = {};
    alignas(16) unsigned char table[256] = {};
    const py::Layout& l;

    template <typename T> static void put(unsigned char* base, uint32_t offset, T value) {
        std::memcpy(base + offset, &value, sizeof value);
    }
    FakeCode(const py::Layout& layout, int64_t name_hash, const char* lines) : l(layout) {
        put(code, l.co_qualname, reinterpret_cast<uintptr_t>(name));
        put(code, l.co_linetable, reinterpret_cast<uintptr_t>(table));
        put(code, l.co_firstlineno, int32_t{10});
        put(name, l.str_length, int64_t{6});
        put(name, l.str_length + 8, name_hash);
        set_table(lines);
    }
    void set_table(const char* lines) {
        auto n = static_cast<int64_t>(std::strlen(lines));
        put(table, l.var_size, n);
        std::memcpy(table + l.bytes_sval, lines, static_cast<size_t>(n));
    }
    py::CodeKey key() const { return py::fingerprint(l, reinterpret_cast<uintptr_t>(code)); }
};

} // namespace

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
