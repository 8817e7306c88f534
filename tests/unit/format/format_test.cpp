// The trace format round-trips, and the reader survives damaged files.
#include <gtest/gtest.h>

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

std::vector<uint8_t> alloc_payload(uint64_t address, uint64_t size) {
    std::vector<uint8_t> buf(256);
    Encoder e(buf.data(), buf.data() + buf.size());
    put::stack_node(e, 1, 0, 0x401234);
    put::alloc(e, 5, Api::cudaMalloc, MemKind::Device, -1, address, size, 1, 0);
    put::free(e, 7, Api::cuMemFree_v2, Space::Device, address, 0);
    buf.resize(static_cast<size_t>(e.position() - buf.data()));
    return buf;
}

TEST(Varint, RoundTripsExtremes) {
    for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, ~0ull}) {
        // A Capped record carries one plain varint: decode v through it.
        uint8_t rec[kMaxVarintBytes * 2 + 2];
        Encoder r(rec, rec + sizeof rec);
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
        Encoder r(rec, rec + sizeof rec);
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
    RecordCursor c(payload.data(), payload.data() + payload.size(), f.blocks()[0].first_ts);
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

    TempTrace newer;
    newer.header(kFormatVersion + 1);
    TraceFile b;
    EXPECT_FALSE(b.open(newer.path()));
    EXPECT_NE(b.error().find("unsupported trace format version"), std::string::npos);

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
