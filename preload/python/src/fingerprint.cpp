#include "fingerprint.h"

#include <cstring>

#include "frame_walk.h"

namespace gpuleak::python {
namespace {

constexpr int64_t kMaxTableBytes = 16 << 20;
// Line tables up to kWholeTable bytes are digested whole, longer ones by their first and last
// kTableEnd bytes: the functions re-created in loops are small ones, and the cost per frame stays
// bounded (module bodies have line tables of many KiB).
constexpr uint32_t kWholeTable = 128;
constexpr uint32_t kTableEnd = 64;

uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

uint64_t table_digest(uintptr_t bytes, uint32_t n, uint64_t h) {
    if (n < 8) {
        for (uint32_t i = 0; i < n; ++i)
            h = mix(h, load<uint8_t>(bytes, i));
        return h;
    }
    if (n <= kWholeTable) {
        for (uint32_t i = 0; i + 8 <= n; i += 8)
            h = mix(h, load<uint64_t>(bytes, i));
        return mix(h, load<uint64_t>(bytes, n - 8));
    }
    for (uint32_t i = 0; i < kTableEnd; i += 8)
        h = mix(h, load<uint64_t>(bytes, i));
    for (uint32_t i = n - kTableEnd; i < n; i += 8)
        h = mix(h, load<uint64_t>(bytes, i));
    return h;
}

// The str's cached hash (the Py_hash_t after its length; -1 until computed). Names are interned
// identifiers, so theirs is set, and unlike the length it tells "f_0001" from "f_0002".
uint64_t str_hash(const Layout& l, uintptr_t str) {
    return str ? static_cast<uint64_t>(load<int64_t>(str, l.str_length + 8)) : 0;
}

// Whether table_summary() digests bytes of a table of this size, or only the size.
bool has_digested_bytes(int64_t size) {
    return size > 0 && size <= kMaxTableBytes;
}

uint64_t table_summary(const Layout& l, uintptr_t table, bool whole) {
    if (!table) return 0;
    int64_t size = load<int64_t>(table, l.var_size);
    uint64_t h = mix(0, static_cast<uint64_t>(size));
    if (!has_digested_bytes(size)) return h;
    auto n = static_cast<uint32_t>(size);
    uintptr_t bytes = table + l.bytes_sval;
    if (whole) return table_digest(bytes, n, h);
    if (n < 8) return h;
    return mix(mix(h, load<uint64_t>(bytes, 0)), load<uint64_t>(bytes, n - 8));
}

// The bytes of a line table of `n` bytes that table_digest() reads.
struct Covered {
    uint32_t head, tail; // bytes [0, head) and [n - tail, n)
};
Covered covered(uint32_t n) {
    return n <= kWholeTable ? Covered{n, 0} : Covered{kTableEnd, kTableEnd};
}
static_assert(2 * kTableEnd <= sizeof CodeCache::Slot::table, "a slot holds what is digested");

// The table's size as table_summary() reads it (-1: no table).
int64_t table_size(const Layout& l, uintptr_t table) {
    return table ? load<int64_t>(table, l.var_size) : -1;
}

} // namespace

void copy_content(const Layout& l, uintptr_t qualname, uintptr_t table, CodeCache::Slot& slot) {
    slot.qualname_hash = str_hash(l, qualname);
    slot.table_size = table_size(l, table);
    if (!has_digested_bytes(slot.table_size)) return;
    auto n = static_cast<uint32_t>(slot.table_size);
    Covered c = covered(n);
    auto bytes = reinterpret_cast<const uint8_t*>(table + l.bytes_sval);
    std::memcpy(slot.table, bytes, c.head);
    std::memcpy(slot.table + c.head, bytes + n - c.tail, c.tail);
}

bool same_content(const Layout& l, uintptr_t qualname, uintptr_t table,
                  const CodeCache::Slot& slot) {
    if (str_hash(l, qualname) != slot.qualname_hash || table_size(l, table) != slot.table_size)
        return false;
    if (!has_digested_bytes(slot.table_size)) return true;
    auto n = static_cast<uint32_t>(slot.table_size);
    Covered c = covered(n);
    auto bytes = reinterpret_cast<const uint8_t*>(table + l.bytes_sval);
    return std::memcmp(slot.table, bytes, c.head) == 0 &&
           (c.tail == 0 || std::memcmp(slot.table + c.head, bytes + n - c.tail, c.tail) == 0);
}

CodeKey fingerprint(const Layout& l, uintptr_t code) {
    CodeKey key = code_pointers(l, code);
    if (l.co_version != kAbsent) {
        // Unique per code object unless the 32-bit counter ran out (then it stays 0).
        uint32_t version = load<uint32_t>(code, static_cast<uint32_t>(l.co_version));
        key.content = version ? version : table_summary(l, key.linetable, false);
    } else {
        key.content = mix(str_hash(l, key.qualname), table_summary(l, key.linetable, true));
    }
    return key;
}

} // namespace gpuleak::python
