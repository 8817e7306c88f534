// The trace format round-trips, and the reader survives damaged files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "gpuleak/format/encoder.h"
#include "gpuleak/format/reader.h"
#include "gpuleak/format/writer.h"

namespace gpuleak::format {
namespace {

// A trace file written through format's TraceWriter (raw blocks, so tests can damage payload bytes
// at known offsets).
class TempTrace {
public:
    TempTrace()
        : path_(std::filesystem::temp_directory_path() /
                ("format_test_" + std::to_string(getpid()) + "_" + std::to_string(counter_++) +
                 ".bin")),
          writer_(sink_, {.compress = false}) {}
    ~TempTrace() { std::filesystem::remove(path_); }
    std::string path() const { return path_.string(); }

    void header(uint32_t version = kFormatVersion) {
        if (version == kFormatVersion) {
            ASSERT_EQ(writer_.start().kind, WriteStatus::Written);
        } else {
            FileHeader h = file_header(version);
            Piece piece{&h, sizeof h};
            ASSERT_EQ(sink_.append(&piece, 1), 0);
        }
        save();
    }
    void block(uint32_t thread, uint64_t sequence, uint64_t first_ts,
               const std::vector<uint8_t>& payload) {
        BlockMeta meta{thread, sequence, first_ts, first_ts + 1000};
        ASSERT_EQ(
            writer_.write_block(meta, payload.data(), static_cast<uint32_t>(payload.size())).kind,
            WriteStatus::Written);
        save();
    }
    void append(const void* data, size_t n) {
        Piece piece{data, n};
        ASSERT_EQ(sink_.append(&piece, 1), 0);
        save();
    }
    void truncate(uintmax_t size) { std::filesystem::resize_file(path_, size); }
    uintmax_t size() const { return std::filesystem::file_size(path_); }

private:
    void save() {
        std::FILE* f = std::fopen(path().c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fwrite(sink_.bytes().data(), 1, sink_.bytes().size(), f);
        std::fclose(f);
    }
    static inline int counter_ = 0;
    std::filesystem::path path_;
    MemorySink sink_;
    TraceWriter writer_;
};

// A block payload as the recorder lays one out: `fill` writes records, pack_block adds the time
// column and its size.
template <typename Fill> std::vector<uint8_t> packed(Fill&& fill, size_t capacity = 1 << 16) {
    std::vector<uint8_t> buf(capacity);
    uint8_t* top = buf.data() + buf.size() - kTimeTrailerBytes;
    Encoder e(buf.data(), top);
    fill(e);
    buf.resize(pack_block(buf.data(), static_cast<uint32_t>(e.position() - buf.data()), top,
                          static_cast<uint32_t>(top - e.column())));
    return buf;
}

void alloc_and_free(Encoder& e, uint64_t address, uint64_t size) {
    put::stack_node(e, 1, 0, 0x401234);
    put::alloc(e, 5, Api::cudaMalloc, MemKind::Device, -1, address, size, 1, 0);
    put::free(e, 7, Api::cuMemFree_v2, Space::Device, address, 0);
}

std::vector<uint8_t> alloc_payload(uint64_t address, uint64_t size) {
    return packed([&](Encoder& e) { alloc_and_free(e, address, size); });
}

// The records of a payload, and the cursor's error once they end.
std::vector<Record> read_all(uint32_t version, const std::vector<uint8_t>& payload,
                             std::string& error, uint64_t first_ts = 0,
                             bool times_and_stacks_only = false) {
    auto c = RecordCursor::block(version, payload.data(), payload.size(), first_ts);
    if (times_and_stacks_only) c.times_and_stacks_only();
    std::vector<Record> out;
    Record r;
    while (c.next(r))
        out.push_back(r);
    error = c.error();
    return out;
}

// An allocation and a free record for each of their fields (after the tag), that field past ten
// bytes and the ones before it zero.
std::vector<std::vector<uint8_t>> records_with_a_field_too_long() {
    std::vector<std::vector<uint8_t>> out;
    for (Tag tag : {Tag::Alloc, Tag::Free})
        for (size_t field = 0; field < (tag == Tag::Alloc ? 7u : 4u); ++field) {
            std::vector<uint8_t> r(1 + field + 11, 0x80); // 11 continuations: past ten bytes
            r[0] = static_cast<uint8_t>(tag);
            std::fill_n(r.begin() + 1, field, 0);
            out.push_back(r);
        }
    return out;
}

TEST(Varint, RoundTripsExtremes) {
    for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, ~0ull}) {
        // A Capped record carries one plain varint: decode v through it.
        uint8_t rec[kMaxVarintBytes * 2 + 2];
        auto r = Encoder::with_inline_time(rec, rec + sizeof rec);
        put::capped(r, 0, v);
        RecordCursor cursor(rec, r.position(), 0);
        Record out;
        ASSERT_TRUE(cursor.next(out));
        EXPECT_EQ(out.count, v);
    }
    for (int64_t v : std::initializer_list<int64_t>{0, -1, 1, INT64_MIN, INT64_MAX})
        EXPECT_EQ(unzigzag(zigzag(v)), v);
}

// Far from a payload's end the reader decodes 2 to 8 bytes at once: every length, both sides of
// every 7-bit boundary, and random values, each followed by a record that must still be found.
TEST(Varint, DecodesEveryLengthAwayFromTheEnd) {
    std::vector<uint64_t> values = {0, 1, 127, 128, ~0ull, ~0ull >> 1, 1ull << 63};
    for (int bits = 7; bits < 64; bits += 7) {
        values.push_back((1ull << bits) - 1);
        values.push_back(1ull << bits);
        values.push_back((1ull << bits) + 1);
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 2000; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        values.push_back(x >> (i % 64));
    }
    for (uint64_t v : values) {
        uint8_t rec[64] = {};
        auto r = Encoder::with_inline_time(rec, rec + sizeof rec);
        put::capped(r, 3, v);
        put::capped(r, 4, 77); // the next record starts where the varint ended
        RecordCursor cursor(rec, r.position() + 20, 0); // the fast path needs ten bytes left
        Record out;
        ASSERT_TRUE(cursor.next(out)) << v;
        EXPECT_EQ(out.count, v);
        ASSERT_TRUE(cursor.next(out)) << v;
        EXPECT_EQ(out.ts, 7u);
        EXPECT_EQ(out.count, 77u) << v;
    }
    // Continuation bits to the end of the payload, and eleven of them far from it.
    uint8_t rec[40] = {static_cast<uint8_t>(Tag::Capped), 0};
    std::memset(rec + 2, 0x80, 11);
    for (size_t end : {7, 40}) {
        RecordCursor cursor(rec, rec + end, 0);
        Record out;
        EXPECT_FALSE(cursor.next(out));
        EXPECT_EQ(cursor.error(), end == 7 ? "record truncated" : "varint too long");
    }
}

// Allocations and frees are decoded without a bounds check per field where every field's ten
// bytes are there (RecordCursor::alloc_unchecked), else field by field: both ways give the same
// record and the same errors. Each record is read once as the last of its block (the checked way)
// and once followed by enough stack nodes (the unchecked way).
TEST(RecordCursor, AllocationsAndFreesReadAlikeNearAndFarFromTheEnd) {
    uint64_t x = 0x2545f4914f6cdd1dull;
    auto random = [&] {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return x >> (x % 64);
    };
    // After both records, ten bytes of the time column and more than 70 of records.
    auto padding = [](Encoder& e) {
        for (int i = 0; i < 10; ++i)
            put::free(e, 0, Api::cudaFree, Space::Device, 0, 0);
        for (int i = 0; i < 40; ++i)
            put::stack_node(e, 1000 + i, 0, ~0ull);
    };
    for (int i = 0; i < 3000; ++i) {
        const uint64_t dt = random() >> 2, address = random(), size = random();
        const uint64_t stack = random(), py_stack = random();
        const int64_t device = static_cast<int64_t>(random()) * (i % 2 ? -1 : 1);
        const int64_t result = static_cast<int64_t>(random()) * (i % 3 ? 1 : -1);
        const Api api = static_cast<Api>(random() % (static_cast<uint64_t>(Api::Count) + 3));
        const auto kind = static_cast<MemKind>(random() % kMemKindCount);
        const auto space = static_cast<Space>(random() % 3);
        for (bool far : {false, true}) {
            auto payload = packed([&](Encoder& e) {
                put::alloc(e, dt, api, kind, device, address, size, stack, py_stack);
                put::free(e, dt, api, space, address, result);
                if (far) padding(e);
            });
            std::string error;
            auto records = read_all(kFormatVersion, payload, error, 10);
            ASSERT_EQ(error, "") << i;
            ASSERT_EQ(records.size(), far ? 52u : 2u);
            const Record& a = records[0];
            const Record& f = records[1];
            const Api read_api = api < Api::Count ? api : Api::Unknown;
            EXPECT_EQ(a.tag, Tag::Alloc);
            EXPECT_EQ(a.ts, 10 + dt) << i << far;
            EXPECT_EQ(a.api, read_api);
            EXPECT_EQ(a.kind, kind);
            EXPECT_EQ(a.device, device);
            EXPECT_EQ(a.address, address);
            EXPECT_EQ(a.size, size);
            EXPECT_EQ(a.stack, stack);
            EXPECT_EQ(a.py_stack, py_stack);
            EXPECT_EQ(f.tag, Tag::Free);
            EXPECT_EQ(f.ts, 10 + 2 * dt) << i << far;
            EXPECT_EQ(f.api, read_api);
            EXPECT_EQ(f.space, space);
            EXPECT_EQ(f.address, address);
            EXPECT_EQ(f.result, result);
        }
    }
    // Malformed fields: the same error either way.
    struct Bad {
        std::vector<uint8_t> record;
        std::string error;
    };
    std::vector<Bad> bad = {
        {{static_cast<uint8_t>(Tag::Alloc), 1, kMemKindCount, 0, 0, 0, 0, 0}, "bad memory kind"},
        {{static_cast<uint8_t>(Tag::Free), 1, 3, 0, 0}, "bad address space"},
    };
    for (const std::vector<uint8_t>& r : records_with_a_field_too_long())
        bad.push_back({r, "varint too long"});
    for (const Bad& b : bad)
        for (bool far : {false, true}) {
            std::vector<uint8_t> payload = b.record;
            // Never read: the record fails first.
            payload.resize(payload.size() + (far ? 100 : 4), 0x7f);
            // The time column: ten deltas far from the end, one near it.
            const uint8_t column = far ? 10 : 1;
            payload.insert(payload.end(), column, 1);
            payload.insert(payload.end(), {column, 0, 0, 0});
            std::string error;
            EXPECT_TRUE(read_all(kFormatVersion, payload, error).empty());
            EXPECT_EQ(error, b.error) << far;
        }
}

// Pass 1 of the analyzer reads allocations and frees for their times and stacks alone
// (RecordCursor::times_and_stacks_only), stepping over the other fields: the same records, times,
// stacks and errors as a full decode, whatever the lengths of the fields it steps over, far from
// the end of the block and near it.
TEST(RecordCursor, TimesAndStacksOnlyEndEachRecordWhereAFullDecodeEndsIt) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    auto random = [&] {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return x >> (x % 64);
    };
    auto same = [](const std::vector<uint8_t>& payload, const std::string& what) {
        std::string full_error, skim_error;
        auto full = read_all(kFormatVersion, payload, full_error, 10);
        auto skim = read_all(kFormatVersion, payload, skim_error, 10, true);
        EXPECT_EQ(skim_error, full_error) << what;
        ASSERT_EQ(skim.size(), full.size()) << what;
        for (size_t k = 0; k < full.size(); ++k) {
            const Record& f = full[k];
            const Record& s = skim[k];
            EXPECT_EQ(s.tag, f.tag) << what << " record " << k;
            EXPECT_EQ(s.ts, f.ts) << what << " record " << k;
            if (f.tag == Tag::Alloc || f.tag == Tag::Free) {
                EXPECT_EQ(s.api, f.api) << what << " record " << k;
            }
            if (f.tag == Tag::Alloc) {
                EXPECT_EQ(s.kind, f.kind) << what << " record " << k;
                EXPECT_EQ(s.stack, f.stack) << what << " record " << k;
                EXPECT_EQ(s.py_stack, f.py_stack) << what << " record " << k;
            }
            if (f.tag == Tag::Free) {
                EXPECT_EQ(s.space, f.space) << what << " record " << k;
            }
            if (f.tag == Tag::StackNode) {
                EXPECT_EQ(s.id, f.id) << what << " record " << k;
            }
        }
    };
    for (int i = 0; i < 3000; ++i) {
        // Fields of every length: within a word and past it.
        const uint64_t address = i % 4 ? 0x7f0000000000ull + (random() >> 20) : random();
        const uint64_t size = i % 3 ? random() >> 40 : random();
        const int64_t result = i % 5 ? 0 : static_cast<int64_t>(random());
        const int64_t device = i % 7 ? static_cast<int64_t>(i % 8) : static_cast<int64_t>(random());
        const auto space = static_cast<Space>(random() % 3);
        const auto kind = static_cast<MemKind>(random() % kMemKindCount);
        const uint64_t dt = random() >> 2, stack = random(), py_stack = random() >> 30;
        for (bool far : {false, true}) {
            auto payload = packed([&](Encoder& e) {
                put::free(e, dt, Api::cudaFree, space, address, result);
                put::alloc(e, dt, Api::cudaMalloc, kind, device, address, size, stack, py_stack);
                put::stack_node(e, i, 0, address);
                put::free(e, 1, Api::cuMemFree_v2, space, address + 1, result);
                put::alloc(e, 1, Api::cuMemAlloc_v2, kind, device, size, address, py_stack, 0);
                if (!far) return;
                for (int k = 0; k < 20; ++k)
                    put::stack_node(e, 1000 + k, 0, ~0ull);
            });
            same(payload, std::to_string(i) + (far ? " far" : " near"));
        }
    }
    // Malformed and unusual records: a field of two bytes where one would do (a needless
    // continuation), a bad kind or space, a field past ten bytes, a record cut short; each with a
    // time column that reads and with one whose delta is too long (which a full decode meets
    // first).
    const uint8_t alloc_tag = static_cast<uint8_t>(Tag::Alloc);
    const uint8_t free_tag = static_cast<uint8_t>(Tag::Free);
    std::vector<std::vector<uint8_t>> records = {
        {free_tag, 0x81, 0x00, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0},
        {free_tag, 1, 0x80, 0x00, 0x80, 0x01, 0},
        {free_tag, 1, 3, 0, 0},
        {free_tag, 1, 0, 0x80},
        {alloc_tag, 0x81, 0x00, 0, 0, 0, 0, 0, 0},
        {alloc_tag, 1, 0x80, 0x00, 0, 0, 0, 0, 0},
        {alloc_tag, 1, 0, 0x81, 0x00, 0, 0, 0, 0},
        {alloc_tag, 1, kMemKindCount, 0, 0, 0, 0, 0},
        {alloc_tag, 1, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 9, 7, 3},
        {alloc_tag, 1, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 7, 3},
        {alloc_tag, 1, 0, 0, 0x80},
    };
    for (const std::vector<uint8_t>& r : records_with_a_field_too_long())
        records.push_back(r);
    for (size_t i = 0; i < records.size(); ++i)
        for (bool far : {false, true})
            for (bool long_delta : {false, true}) {
                std::vector<uint8_t> payload = records[i];
                // Stack nodes after it (far: enough that every field's ten bytes are there).
                for (int k = 0; k < (far ? 40 : 1); ++k)
                    payload.insert(payload.end(), {static_cast<uint8_t>(Tag::StackNode), 1, 0, 1});
                const uint8_t column = far || long_delta ? 11 : 1;
                payload.insert(payload.end(), column, long_delta ? 0x80 : 1);
                payload.insert(payload.end(), {column, 0, 0, 0});
                same(payload, "malformed " + std::to_string(i) + (far ? " far" : " near") +
                                  (long_delta ? ", long delta" : ""));
            }
}

TEST(TraceFile, ReadsBlocksAndRecords) {
    TempTrace t;
    t.header();
    t.block(1, 0, 100, alloc_payload(0xdead0000, 4096));
    TraceFile f;
    ASSERT_TRUE(f.open(t.path())) << f.error();
    f.index_blocks();
    EXPECT_TRUE(f.damage().empty()) << f.damage();
    ASSERT_EQ(f.blocks().size(), 1u);
    std::vector<uint8_t> payload;
    ASSERT_TRUE(f.load(f.blocks()[0], payload));
    EXPECT_EQ(f.version(), kFormatVersion);
    auto c =
        RecordCursor::block(f.version(), payload.data(), payload.size(), f.blocks()[0].first_ts);
    Record r;
    ASSERT_TRUE(c.next(r));
    EXPECT_EQ(r.tag, Tag::StackNode);
    EXPECT_EQ(r.ip, 0x401234u);
    ASSERT_TRUE(c.next(r));
    EXPECT_EQ(r.tag, Tag::Alloc);
    EXPECT_EQ(r.ts, 105u);
    EXPECT_EQ(r.api, Api::cudaMalloc);
    EXPECT_EQ(r.device, -1);
    EXPECT_EQ(r.address, 0xdead0000u);
    EXPECT_EQ(r.size, 4096u);
    ASSERT_TRUE(c.next(r));
    EXPECT_EQ(r.tag, Tag::Free);
    EXPECT_EQ(r.ts, 112u);
    EXPECT_FALSE(c.next(r));
    EXPECT_TRUE(c.error().empty());
}

// A block's time deltas live in a column of their own: every varint length reads back, far from
// the column's end and close to it, interleaved with records whose bytes do not depend on them.
TEST(TimeColumn, EveryDeltaReadsBackWhateverItsLength) {
    std::vector<uint64_t> deltas = {0, 1, 127, 128, 16383, 16384, ~0ull >> 1};
    for (int bits = 7; bits < 63; bits += 7) {
        deltas.push_back((1ull << bits) - 1);
        deltas.push_back(1ull << bits);
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 500; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        deltas.push_back((x >> (i % 64)) >> 2); // the sum of all must not overflow
    }
    auto payload = packed([&](Encoder& e) {
        for (uint64_t dt : deltas) {
            put::free(e, dt, Api::cudaFree, Space::Device, 0x7000, 0);
            put::stack_node(e, 9, 0, 0x401000); // untimed records take no delta
        }
    });
    std::string error;
    auto records = read_all(kFormatVersion, payload, error, 1000);
    EXPECT_EQ(error, "");
    ASSERT_EQ(records.size(), 2 * deltas.size());
    uint64_t ts = 1000;
    for (size_t i = 0; i < deltas.size(); ++i) {
        ts += deltas[i];
        EXPECT_EQ(records[2 * i].tag, Tag::Free);
        EXPECT_EQ(records[2 * i].ts, ts) << "delta " << i << " = " << deltas[i];
        EXPECT_EQ(records[2 * i].address, 0x7000u);
        EXPECT_EQ(records[2 * i + 1].tag, Tag::StackNode);
    }
}

// What the column is for: a loop's records are the same bytes whatever their times, so zstd
// stores one copy of them and the times on their own.
TEST(TimeColumn, RecordsDifferingOnlyInTimeAreTheSameBytes) {
    auto one = packed([](Encoder& e) {
        put::alloc(e, 3, Api::cudaMalloc, MemKind::Device, 0, 0x7000, 256, 4, 0);
    });
    auto other = packed([](Encoder& e) {
        put::alloc(e, 300000, Api::cudaMalloc, MemKind::Device, 0, 0x7000, 256, 4, 0);
    });
    ASSERT_GT(one.size(), 5u);
    ASSERT_GT(other.size(), 5u);
    size_t records_one = one.size() - kTimeTrailerBytes - one[one.size() - kTimeTrailerBytes];
    size_t records_other =
        other.size() - kTimeTrailerBytes - other[other.size() - kTimeTrailerBytes];
    ASSERT_EQ(records_one, records_other);
    EXPECT_TRUE(
        std::equal(one.begin(), one.begin() + static_cast<long>(records_one), other.begin()));
    EXPECT_EQ(one[one.size() - kTimeTrailerBytes], 1u);     // 3: one byte of column
    EXPECT_EQ(other[other.size() - kTimeTrailerBytes], 3u); // 300000: three
}

// A damaged column is a malformed block, never a wrong time.
TEST(TimeColumn, DamagedColumnsAreNamed) {
    std::string error;
    auto payload = alloc_payload(0x1000, 64); // two deltas, one byte each
    auto oversized = payload;
    oversized[oversized.size() - kTimeTrailerBytes] = 200; // more column than payload
    EXPECT_TRUE(read_all(kFormatVersion, oversized, error).empty());
    EXPECT_EQ(error, "block too short for its time column");
    EXPECT_TRUE(read_all(kFormatVersion, std::vector<uint8_t>{1, 0}, error).empty());
    EXPECT_EQ(error, "block too short for its time column");

    // The column said to be one byte: the Free finds no delta left.
    auto short_column = payload;
    short_column[short_column.size() - kTimeTrailerBytes] = 1;
    auto records = read_all(kFormatVersion, short_column, error);
    EXPECT_EQ(records.size(), 2u); // the stack node and the alloc; the free is cut off
    EXPECT_FALSE(error.empty());

    // A column with a delta no record takes.
    auto long_column = packed([](Encoder& e) {
        put::free(e, 1, Api::cudaFree, Space::Device, 0x7000, 0);
        e.time(5);
    });
    records = read_all(kFormatVersion, long_column, error);
    EXPECT_EQ(records.size(), 1u);
    EXPECT_EQ(error, "time column longer than its records (1 bytes left)");
}

// Traces of version 1 (the time delta inside each record) still read, with the same times.
TEST(TraceFile, ReadsVersion1Traces) {
    std::vector<uint8_t> v1(256);
    auto e = Encoder::with_inline_time(v1.data(), v1.data() + v1.size());
    alloc_and_free(e, 0xdead0000, 4096);
    v1.resize(static_cast<size_t>(e.position() - v1.data()));
    TempTrace t;
    t.header(1);
    t.block(1, 0, 100, v1);
    TraceFile f;
    ASSERT_TRUE(f.open(t.path())) << f.error();
    EXPECT_EQ(f.version(), 1u);
    f.index_blocks();
    ASSERT_EQ(f.blocks().size(), 1u);
    std::vector<uint8_t> payload;
    ASSERT_TRUE(f.load(f.blocks()[0], payload));
    std::string error;
    auto records = read_all(f.version(), payload, error, f.blocks()[0].first_ts);
    EXPECT_EQ(error, "");
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[1].tag, Tag::Alloc);
    EXPECT_EQ(records[1].ts, 105u);
    EXPECT_EQ(records[1].size, 4096u);
    EXPECT_EQ(records[2].tag, Tag::Free);
    EXPECT_EQ(records[2].ts, 112u);
    // The same records in a version-2 block read the same.
    auto v2 = read_all(kFormatVersion, alloc_payload(0xdead0000, 4096), error, 100);
    ASSERT_EQ(v2.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(v2[i].tag, records[i].tag);
        EXPECT_EQ(v2[i].ts, records[i].ts);
        EXPECT_EQ(v2[i].address, records[i].address);
    }
}

TEST(TraceFile, TruncatedBlockKeepsTheReadablePrefix) {
    TempTrace t;
    t.header();
    t.block(1, 0, 0, alloc_payload(0x1000, 1));
    auto good = t.size();
    t.block(1, 1, 2000, alloc_payload(0x2000, 2));
    t.truncate(t.size() - 3);
    TraceFile f;
    ASSERT_TRUE(f.open(t.path()));
    f.index_blocks();
    EXPECT_EQ(f.blocks().size(), 1u);
    EXPECT_NE(f.damage().find("cut short"), std::string::npos) << f.damage();
    EXPECT_EQ(f.blocks()[0].offset + f.blocks()[0].stored_size, good);
}

TEST(TraceFile, CorruptPayloadIsDetected) {
    TempTrace t;
    t.header();
    t.block(1, 0, 0, alloc_payload(0x1000, 1));
    std::FILE* f = std::fopen(t.path().c_str(), "r+b");
    std::fseek(f, static_cast<long>(sizeof(FileHeader) + sizeof(BlockHeader) + 2), SEEK_SET);
    std::fputc(0x7f, f);
    std::fclose(f);
    TraceFile tf;
    ASSERT_TRUE(tf.open(t.path()));
    tf.index_blocks();
    EXPECT_TRUE(tf.blocks().empty());
    EXPECT_NE(tf.damage().find("checksum"), std::string::npos);
}

TEST(TraceFile, RejectsOtherFilesWithAReason) {
    TempTrace not_trace;
    not_trace.append("hello world, not a trace", 24);
    TraceFile a;
    EXPECT_FALSE(a.open(not_trace.path()));
    EXPECT_NE(a.error().find("bad magic"), std::string::npos);

    for (uint32_t version : {kFormatVersion + 1, kOldestReadableVersion - 1}) {
        TempTrace other;
        other.header(version);
        TraceFile b;
        EXPECT_FALSE(b.open(other.path()));
        EXPECT_NE(b.error().find("unsupported trace format version " + std::to_string(version) +
                                 " (this gpuleak-report reads 1 to 2)"),
                  std::string::npos)
            << b.error();
    }

    TempTrace tiny;
    tiny.append("GPU", 3);
    TraceFile c;
    EXPECT_FALSE(c.open(tiny.path()));
}

TEST(RecordCursor, HostileLengthsFailCleanly) {
    // A module record claiming a 2^40-byte path in a 20-byte payload.
    uint8_t buf[32];
    Encoder e(buf, buf + sizeof buf);
    e.tag(Tag::Module);
    e.varint(0);
    e.varint(0x1000);
    e.varint(1ull << 40);
    RecordCursor c(buf, e.position(), 0);
    Record r;
    EXPECT_FALSE(c.next(r));
    EXPECT_FALSE(c.error().empty());
    uint8_t unknown[] = {0xEE, 1, 2};
    RecordCursor u(unknown, unknown + 3, 0);
    EXPECT_FALSE(u.next(r));
    EXPECT_NE(u.error().find("unknown record tag"), std::string::npos);
}

} // namespace
} // namespace gpuleak::format
