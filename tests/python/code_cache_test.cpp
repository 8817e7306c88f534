// The thread's code cache: a slot answers for a code object only while every field of its
// fingerprint still matches, found without computing the fingerprint.
#include <gtest/gtest.h>

#include <string>

#include "code_cache.h"
#include "fake_code.h"
#include "version_tables.h"

namespace py = gpuleak::python;
using gpuleak::python::fakes::FakeCode;

namespace {

// The set of `cache` this code lands in, after storing its fingerprint there with `id`.
py::CodeCache::Slot* store(const py::Layout& l, py::CodeCache& cache, const FakeCode& c,
                           uint64_t id) {
    auto code = reinterpret_cast<uintptr_t>(c.code);
    py::CodeCache::Slot* set = py::cache_set(cache, py::code_address_hash(code));
    py::CodeKey key = c.key();
    uint64_t packed[6];
    py::pack(key, packed);
    py::cache_store(l, set, key, packed, id);
    return set;
}

uint64_t found(const py::CodeCache::Slot* slot) {
    return slot ? slot->id : 0;
}

} // namespace

TEST(CodeCache, VersionedLookupNeedsEveryFieldAndTheVersion) {
    py::Layout l;
    ASSERT_TRUE(py::table_layout(0x030c01f0, l)); // 3.12
    ASSERT_FALSE(py::digests_content(l));
    static py::CodeCache cache{};
    FakeCode c(l, 99, "a line table");
    const auto code = reinterpret_cast<uintptr_t>(c.code);
    const auto version = static_cast<uint32_t>(l.co_version);
    FakeCode::put(c.code, version, uint32_t{41});
    FakeCode::put(c.code, l.co_filename, uintptr_t{0x5000});
    py::CodeCache::Slot* set = store(l, cache, c, 7);
    EXPECT_EQ(found(py::cache_find_versioned(l, set, code)), 7u);

    // Each field of the fingerprint in turn: changed, the slot no longer answers.
    struct Field {
        const char* name;
        uint32_t offset;
        uint64_t other;
        int bytes;
    };
    const Field fields[] = {{"co_version", version, 42, 4},
                            {"co_filename", l.co_filename, 0x6000, 8},
                            {"co_qualname", l.co_qualname, 0x7000, 8},
                            {"co_linetable", l.co_linetable, 0x8000, 8},
                            {"co_firstlineno", l.co_firstlineno, 11, 4}};
    for (const Field& f : fields) {
        SCOPED_TRACE(f.name);
        unsigned char saved[8];
        std::memcpy(saved, c.code + f.offset, 8);
        std::memcpy(c.code + f.offset, &f.other, static_cast<size_t>(f.bytes));
        EXPECT_EQ(py::cache_find_versioned(l, set, code), nullptr);
        std::memcpy(c.code + f.offset, saved, 8);
        EXPECT_EQ(found(py::cache_find_versioned(l, set, code)), 7u);
    }
    // A counter that ran out (0) is no fingerprint: the caller must digest the line table.
    FakeCode::put(c.code, version, uint32_t{0});
    EXPECT_EQ(py::cache_find_versioned(l, set, code), nullptr);
    // Another code object in the same set is not found in this one's slot.
    FakeCode other(l, 99, "a line table");
    EXPECT_EQ(py::cache_find_versioned(l, set, reinterpret_cast<uintptr_t>(other.code)), nullptr);
}

TEST(CodeCache, UndigestedLookupComparesWhatTheDigestReads) {
    py::Layout l;
    ASSERT_TRUE(py::table_layout(0x030b07f0, l)); // 3.11
    ASSERT_TRUE(py::digests_content(l));
    for (size_t size : {20u, 128u, 200u}) {
        SCOPED_TRACE("line table of " + std::to_string(size) + " bytes");
        static py::CodeCache cache;
        cache = {};
        std::string table(size, 'a');
        FakeCode c(l, 1234, table.c_str());
        const auto code = reinterpret_cast<uintptr_t>(c.code);
        py::CodeCache::Slot* set = store(l, cache, c, 9);
        EXPECT_EQ(found(py::cache_find_undigested(l, set, code)), 9u);
        // The same pointers with other bytes behind them: the last byte, then the first.
        for (size_t at : {size - 1, size_t{0}}) {
            std::string changed = table;
            changed[at] = 'b';
            c.set_table(changed.c_str());
            EXPECT_EQ(py::cache_find_undigested(l, set, code), nullptr) << "byte " << at;
            c.set_table(table.c_str());
            EXPECT_EQ(found(py::cache_find_undigested(l, set, code)), 9u);
        }
        FakeCode::put(c.name, l.str_length + 8, int64_t{5678}); // the name's hash
        EXPECT_EQ(py::cache_find_undigested(l, set, code), nullptr);
    }
}
