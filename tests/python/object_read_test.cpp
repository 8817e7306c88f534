// read_str()/read_bytes() against hand-built objects in the 3.12+ default-build layout.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "layout.h"
#include "object_read.h"
#include "python_stack.h"
#include "version_tables.h"

namespace py = gpuleak::python;

namespace {

alignas(16) unsigned char g_str_type[64];
alignas(16) unsigned char g_bytes_type[64];

py::Layout layout312() {
    py::Layout l;
    py::table_layout(0x030c01f0, l);
    return l;
}

// A compact str: header (type, length, state) followed by the code units.
struct FakeStr {
    alignas(16) unsigned char mem[4096] = {};
    FakeStr(const py::Layout& l, uint32_t kind, bool ascii, const void* units, size_t count,
            bool compact = true, const void* type = g_str_type) {
        auto t = reinterpret_cast<uintptr_t>(type);
        std::memcpy(mem + l.ob_type, &t, 8);
        auto n = static_cast<int64_t>(count);
        std::memcpy(mem + l.str_length, &n, 8);
        uint32_t state = (kind << 2) | (compact ? 1u << 5 : 0) | (ascii ? 1u << 6 : 0);
        std::memcpy(mem + l.str_state, &state, 4);
        std::memcpy(mem + (ascii ? l.str_ascii_size : l.str_compact_size), units, count * kind);
    }
    uintptr_t addr() const { return reinterpret_cast<uintptr_t>(mem); }
};

std::string read(const py::Layout& l, const FakeStr& s, size_t cap = py::kMaxNameBytes) {
    char buf[py::kMaxNameBytes];
    return std::string(
        py::read_str(l, reinterpret_cast<uintptr_t>(g_str_type), s.addr(), buf, cap));
}

} // namespace

TEST(ReadStr, AllKinds) {
    auto l = layout312();
    EXPECT_EQ(read(l, FakeStr(l, 1, true, "hello", 5)), "hello");
    const unsigned char latin1[] = {'f', 0xfc, 'n', 'f'};
    EXPECT_EQ(read(l, FakeStr(l, 1, false, latin1, 4)), "f\xc3\xbcnf");
    const char16_t ucs2[] = {0x0444, 0x0443};
    EXPECT_EQ(read(l, FakeStr(l, 2, false, ucs2, 2)), "\xd1\x84\xd1\x83");
    const char32_t ucs4[] = {0x20000, 'x'};
    EXPECT_EQ(read(l, FakeStr(l, 4, false, ucs4, 2)), "\xf0\xa0\x80\x80x");
}

TEST(ReadStr, LoneSurrogateBecomesReplacementCharacter) {
    auto l = layout312();
    const char16_t units[] = {'a', 0xdcff};
    EXPECT_EQ(read(l, FakeStr(l, 2, false, units, 2)), "a\xef\xbf\xbd");
}

TEST(ReadStr, TruncatesOnCodePointBoundary) {
    auto l = layout312();
    const char16_t units[] = {0x0444, 0x0444, 0x0444};
    EXPECT_EQ(read(l, FakeStr(l, 2, false, units, 3), 5), "\xd1\x84\xd1\x84");
    std::string long_name(3000, 'q');
    EXPECT_EQ(read(l, FakeStr(l, 1, true, long_name.data(), long_name.size())).size(),
              py::kMaxNameBytes);
}

TEST(ReadStr, UnreadableStrings) {
    auto l = layout312();
    EXPECT_EQ(read(l, FakeStr(l, 1, true, "x", 1, /*compact=*/false)), "<?>");
    EXPECT_EQ(read(l, FakeStr(l, 1, true, "x", 1, true, g_bytes_type)), "<?>");
    char buf[16];
    EXPECT_EQ(py::read_str(l, reinterpret_cast<uintptr_t>(g_str_type), 0, buf, sizeof buf), "<?>");
}

TEST(ReadBytes, PayloadOrEmpty) {
    auto l = layout312();
    alignas(16) unsigned char mem[64] = {};
    auto t = reinterpret_cast<uintptr_t>(g_bytes_type);
    std::memcpy(mem + l.ob_type, &t, 8);
    int64_t size = 3;
    std::memcpy(mem + l.var_size, &size, 8);
    std::memcpy(mem + l.bytes_sval, "\x01\x02\x03", 3);
    auto span = py::read_bytes(l, t, reinterpret_cast<uintptr_t>(mem));
    ASSERT_EQ(span.size(), 3u);
    EXPECT_EQ(span[2], 3);
    EXPECT_TRUE(
        py::read_bytes(l, reinterpret_cast<uintptr_t>(g_str_type), reinterpret_cast<uintptr_t>(mem))
            .empty());
}
