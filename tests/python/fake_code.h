// A code object with a name and a line table laid out in memory as a given CPython version lays
// them out: what fingerprint() and the thread's code cache read.
#pragma once

#include <cstdint>
#include <cstring>

#include "fingerprint.h"
#include "layout.h"

namespace gpuleak::python::fakes {

// A code object with a name and a line table, in the given version's layout.
struct FakeCode {
    alignas(16) unsigned char code[512] = {};
    alignas(16) unsigned char name[64] = {};
    alignas(16) unsigned char table[256] = {};
    const Layout& l;

    template <typename T> static void put(unsigned char* base, uint32_t offset, T value) {
        std::memcpy(base + offset, &value, sizeof value);
    }
    FakeCode(const Layout& layout, int64_t name_hash, const char* lines) : l(layout) {
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
    CodeKey key() const { return fingerprint(l, reinterpret_cast<uintptr_t>(code)); }
};

} // namespace gpuleak::python::fakes
