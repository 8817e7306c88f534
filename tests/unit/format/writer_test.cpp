// The writing path: every record through its encoder and back through the reader, block framing
// and compression, the size limit with its reserved room, failing sinks, and the file sink's
// promises (0600, never over a file or through a link, cut back after a failed write, no SIGXFSZ).
// In memory, in milliseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuleak/format/encoder.h"
#include "gpuleak/format/reader.h"
#include "gpuleak/format/writer.h"

namespace gpuleak::format {
namespace {

namespace fs = std::filesystem;

// A block payload: the records `fill` writes, laid out by pack_block.
template <typename Fill> std::vector<uint8_t> encode(Fill&& fill, size_t capacity = 4096) {
    std::vector<uint8_t> buf(capacity);
    uint8_t* top = buf.data() + buf.size() - kTimeTrailerBytes;
    Encoder e(buf.data(), top);
    fill(e);
    buf.resize(pack_block(buf.data(), static_cast<uint32_t>(e.position() - buf.data()), top,
                          static_cast<uint32_t>(top - e.column())));
    return buf;
}

// Every record in a block of `records`, decoded.
std::vector<Record> decode(const std::vector<uint8_t>& payload, uint64_t first_ts = 0) {
    std::vector<Record> out;
    auto c = RecordCursor::block(kFormatVersion, payload.data(), payload.size(), first_ts);
    Record r;
    while (c.next(r))
        out.push_back(r);
    EXPECT_TRUE(c.error().empty()) << c.error();
    return out;
}

// The blocks of a trace in memory, decoded: (block, payload) in file order.
struct ReadBack {
    std::vector<BlockRef> blocks;
    std::vector<std::vector<uint8_t>> payloads;
    std::string damage;
};
ReadBack read_back(const std::vector<uint8_t>& bytes) {
    ReadBack out;
    TraceFile f;
    EXPECT_TRUE(f.open_memory(bytes)) << f.error();
    f.index_blocks();
    out.damage = f.damage();
    out.blocks.assign(f.blocks().begin(), f.blocks().end());
    for (const BlockRef& b : out.blocks) {
        std::vector<uint8_t> payload;
        EXPECT_TRUE(f.load(b, payload)) << f.error();
        out.payloads.push_back(payload);
    }
    return out;
}

TEST(RecordEncoders, EveryRecordReadsBackAsWritten) {
    std::vector<uint8_t> payload = encode([](Encoder& e) {
        put::process(e, 42, 7, 1700000000000000000ull, "/bin/app",
                     std::vector<std::string>{"app", "--x"}, std::vector<std::string>{"RANK=3"},
                     "0.1.0");
        put::module(e, 0, 0x7f0000000000, "/lib/x.so", std::string("\x01\x02", 2),
                    std::vector<std::pair<uint64_t, uint64_t>>{{0, 0x1000}, {0x2000, 0x500}});
        put::thread(e, 1234, "worker");
        put::stack_node(e, 3, 2, 0x401234);
        put::alloc(e, 5, Api::cudaMalloc, MemKind::Managed, -1, 0xdead0000, 4096, 3, 9);
        put::free(e, 1, Api::cuMemFreeHost, Space::Host, 0xdead0000, -4);
        put::alloc_failed(e, 2, Api::cuMemAlloc_v2, MemKind::Device, 1, 1ull << 40, 2, 3, 0, 11,
                          101);
        put::vmm_retain(e, 0, 77, 0x1000);
        put::vmm_release(e, 1, 77);
        put::vmm_map(e, 1, 0x2000, 0x200000, 0x10, 77);
        put::vmm_unmap(e, 1, 0x2000, 0x200000);
        put::marker(e, 1, "step");
        put::trace_end(e, 1);
        put::py_code(e, 5, "f.py", "C.m", -2, "\x80\x01", 2);
        put::py_stack_node(e, 1, 0, 5, -6, true);
        put::capped(e, 1, 99999);
        put::py_info(e, 0x030b07f0, 1);
    });
    std::vector<Record> r = decode(payload, 100);
    ASSERT_EQ(r.size(), 17u);
    EXPECT_EQ(r[0].tag, Tag::Process);
    EXPECT_EQ(r[0].pid, 42u);
    EXPECT_EQ(r[0].ppid, 7u);
    EXPECT_EQ(r[0].start_unix_ns, 1700000000000000000ull);
    EXPECT_EQ(r[0].text, "/bin/app");
    EXPECT_EQ(r[0].strings, (std::vector<std::string>{"app", "--x"}));
    EXPECT_EQ(r[0].strings2, (std::vector<std::string>{"RANK=3"}));
    EXPECT_EQ(r[1].tag, Tag::Module);
    EXPECT_EQ(r[1].address, 0x7f0000000000u);
    EXPECT_EQ(r[1].text, "/lib/x.so");
    EXPECT_EQ(r[1].blob, (std::vector<uint8_t>{1, 2}));
    EXPECT_EQ(r[1].segments,
              (std::vector<std::pair<uint64_t, uint64_t>>{{0, 0x1000}, {0x2000, 0x500}}));
    EXPECT_EQ(r[2].tag, Tag::Thread);
    EXPECT_EQ(r[2].pid, 1234u);
    EXPECT_EQ(r[2].text, "worker");
    EXPECT_EQ(r[3].tag, Tag::StackNode);
    EXPECT_EQ(r[3].id, 3u);
    EXPECT_EQ(r[3].parent, 2u);
    EXPECT_EQ(r[3].ip, 0x401234u);
    EXPECT_EQ(r[4].tag, Tag::Alloc);
    EXPECT_EQ(r[4].ts, 105u); // the module's dt 0, then 5
    EXPECT_EQ(r[4].api, Api::cudaMalloc);
    EXPECT_EQ(r[4].kind, MemKind::Managed);
    EXPECT_EQ(r[4].device, -1);
    EXPECT_EQ(r[4].address, 0xdead0000u);
    EXPECT_EQ(r[4].size, 4096u);
    EXPECT_EQ(r[4].stack, 3u);
    EXPECT_EQ(r[4].py_stack, 9u);
    EXPECT_EQ(r[5].tag, Tag::Free);
    EXPECT_EQ(r[5].ts, 106u);
    EXPECT_EQ(r[5].api, Api::cuMemFreeHost);
    EXPECT_EQ(r[5].space, Space::Host);
    EXPECT_EQ(r[5].result, -4);
    EXPECT_EQ(r[6].tag, Tag::AllocFailed);
    EXPECT_EQ(r[6].size, 1ull << 40);
    EXPECT_EQ(r[6].device, 1);
    EXPECT_EQ(r[6].result, 2);
    EXPECT_EQ(r[6].stack, 3u);
    EXPECT_EQ(r[6].free_bytes, 11u);
    EXPECT_EQ(r[6].total_bytes, 101u);
    EXPECT_EQ(r[7].tag, Tag::VmmRetain);
    EXPECT_EQ(r[7].handle, 77u);
    EXPECT_EQ(r[7].address, 0x1000u);
    EXPECT_EQ(r[8].tag, Tag::VmmRelease);
    EXPECT_EQ(r[8].handle, 77u);
    EXPECT_EQ(r[9].tag, Tag::VmmMap);
    EXPECT_EQ(r[9].address, 0x2000u);
    EXPECT_EQ(r[9].size, 0x200000u);
    EXPECT_EQ(r[9].offset, 0x10u);
    EXPECT_EQ(r[9].handle, 77u);
    EXPECT_EQ(r[10].tag, Tag::VmmUnmap);
    EXPECT_EQ(r[10].size, 0x200000u);
    EXPECT_EQ(r[11].tag, Tag::Marker);
    EXPECT_EQ(r[11].text, "step");
    EXPECT_EQ(r[11].ts, 112u);
    EXPECT_EQ(r[12].tag, Tag::TraceEnd);
    EXPECT_EQ(r[12].ts, 113u);
    EXPECT_EQ(r[13].tag, Tag::PyCode);
    EXPECT_EQ(r[13].ip, 5u);
    EXPECT_EQ(r[13].text, "f.py");
    EXPECT_EQ(r[13].text2, "C.m");
    EXPECT_EQ(r[13].line_or_offset, -2);
    EXPECT_EQ(r[13].blob, (std::vector<uint8_t>{0x80, 0x01}));
    EXPECT_EQ(r[14].tag, Tag::PyStackNode);
    EXPECT_EQ(r[14].id, 1u);
    EXPECT_EQ(r[14].ip, 5u);
    EXPECT_EQ(r[14].line_or_offset, -6);
    EXPECT_TRUE(r[14].is_entry);
    EXPECT_EQ(r[15].tag, Tag::Capped);
    EXPECT_EQ(r[15].count, 99999u);
    EXPECT_EQ(r[16].tag, Tag::PyInfo);
    EXPECT_EQ(r[16].count, 0x030b07f0u);
    EXPECT_EQ(r[16].handle, 1u);
}

TEST(RecordEncoders, TraceEndKeepsItsReservedFieldAtZero) {
    // Tag 13 and a reserved 0 that old traces also carry; the dt (300: 0xac 0x02) in the time
    // column, its first byte last; the column's size.
    std::vector<uint8_t> payload = encode([](Encoder& e) { put::trace_end(e, 300); });
    EXPECT_EQ(payload, (std::vector<uint8_t>{13, 0, 0x02, 0xac, 2, 0, 0, 0}));
}

std::vector<uint8_t> compressible_records(int n) {
    return encode(
        [n](Encoder& e) {
            for (int i = 0; i < n; ++i)
                put::alloc(e, 10, Api::cudaMalloc, MemKind::Device, 0, 0x7f0000000000 + i * 0x1000,
                           4096, 1, 0);
        },
        static_cast<size_t>(n) * kMaxFixedRecord);
}

TEST(TraceWriter, FramesCompressesAndChecksumsBlocksTheReaderAccepts) {
    MemorySink sink;
    TraceWriter w(sink);
    ASSERT_EQ(w.start().kind, WriteStatus::Written);
    std::vector<uint8_t> records = compressible_records(500);
    std::vector<uint8_t> tiny = encode([](Encoder& e) { put::stack_node(e, 1, 0, 0x401000); });
    ASSERT_EQ(
        w.write_block({1, 0, 1000, 6000}, records.data(), static_cast<uint32_t>(records.size()))
            .kind,
        WriteStatus::Written);
    ASSERT_EQ(w.write_block({2, 0, 0, 0}, tiny.data(), static_cast<uint32_t>(tiny.size())).kind,
              WriteStatus::Written);
    EXPECT_EQ(w.bytes(), sink.bytes().size());

    ReadBack back = read_back(sink.bytes());
    EXPECT_TRUE(back.damage.empty()) << back.damage;
    ASSERT_EQ(back.blocks.size(), 2u);
    // A repetitive block is stored compressed; a tiny one, which zstd would make larger, raw.
    EXPECT_EQ(back.blocks[0].flags, static_cast<uint32_t>(kBlockZstd));
    EXPECT_LT(back.blocks[0].stored_size, records.size() / 4);
    EXPECT_EQ(back.blocks[0].raw_size, records.size());
    EXPECT_EQ(back.blocks[0].thread_index, 1u);
    EXPECT_EQ(back.blocks[0].first_ts, 1000u);
    EXPECT_EQ(back.blocks[0].last_ts, 6000u);
    EXPECT_EQ(back.payloads[0], records);
    EXPECT_EQ(back.blocks[1].flags, 0u);
    EXPECT_EQ(back.payloads[1], tiny);

    // One flipped payload byte anywhere is a checksum mismatch.
    std::vector<uint8_t> flipped = sink.bytes();
    flipped[sizeof(FileHeader) + sizeof(BlockHeader) + 3] ^= 1;
    ReadBack damaged = read_back(flipped);
    EXPECT_TRUE(damaged.blocks.empty());
    EXPECT_NE(damaged.damage.find("checksum mismatch"), std::string::npos) << damaged.damage;
}

TEST(TraceWriter, RawWhenCompressionIsOff) {
    MemorySink sink;
    TraceWriter w(sink, {.compress = false});
    w.start();
    std::vector<uint8_t> records = compressible_records(500);
    w.write_block({1, 0, 0, 0}, records.data(), static_cast<uint32_t>(records.size()));
    ASSERT_EQ(sink.bytes().size(), sizeof(FileHeader) + sizeof(BlockHeader) + records.size());
    EXPECT_EQ(std::memcmp(sink.bytes().data() + sizeof(FileHeader) + sizeof(BlockHeader),
                          records.data(), records.size()),
              0);
}

TEST(TraceWriter, EmptyAndOversizedBlocksAreDropped) {
    MemorySink sink;
    TraceWriter w(sink);
    w.start();
    uint8_t one = 0;
    EXPECT_EQ(w.write_block({1, 0, 0, 0}, &one, 0).kind, WriteStatus::Dropped);
    std::vector<uint8_t> huge(kMaxBlockPayload + 1);
    EXPECT_EQ(w.write_block({1, 0, 0, 0}, huge.data(), static_cast<uint32_t>(huge.size())).kind,
              WriteStatus::Dropped);
    EXPECT_EQ(sink.bytes().size(), sizeof(FileHeader));
    EXPECT_FALSE(w.stopped());
}

// Fills a writer with 1 KiB raw blocks until it stops; returns the statuses.
std::vector<WriteStatus> fill(TraceWriter& w, int blocks) {
    std::vector<uint8_t> payload(1024, 0x11);
    std::vector<WriteStatus> out;
    for (int i = 0; i < blocks; ++i)
        out.push_back(
            w.write_block({1, static_cast<uint64_t>(i), 10, 20 + static_cast<uint64_t>(i)},
                          payload.data(), static_cast<uint32_t>(payload.size())));
    return out;
}

TEST(TraceWriter, MaxBytesCapsOnceKeepsRoomForTheEndAndMarksTheTrace) {
    MemorySink sink;
    const uint64_t limit = 8000;
    TraceWriter w(
        sink, {.compress = false, .max_bytes = limit, .clock = []() -> uint64_t { return 777; }});
    w.start();
    std::vector<WriteStatus> s = fill(w, 20);
    // 16 + n * (48 + 1024) + room for two small blocks must stay within 8000: n = 7.
    const int fitted = static_cast<int>(
        (limit - sizeof(FileHeader) - 2 * TraceWriter::kSmallBlockBytes) / (48 + 1024));
    ASSERT_EQ(fitted, 7);
    for (int i = 0; i < fitted; ++i)
        EXPECT_EQ(s[i].kind, WriteStatus::Written) << i;
    EXPECT_EQ(s[fitted].kind, WriteStatus::Capped);
    EXPECT_EQ(s[fitted].limit, limit);
    EXPECT_FALSE(s[fitted].sink_limit);
    for (size_t i = fitted + 1; i < s.size(); ++i)
        EXPECT_EQ(s[i].kind, WriteStatus::Dropped) << i; // reported once
    EXPECT_TRUE(w.capped());
    const uint64_t before_capped = sizeof(FileHeader) + fitted * (48 + 1024);

    // The closing block still fits, into the room kept for it; nothing else does.
    std::vector<uint8_t> end = encode([](Encoder& e) { put::trace_end(e, 0); });
    EXPECT_EQ(w.write_block({0, 1, 900, 900}, end.data(), static_cast<uint32_t>(end.size()),
                            BlockRole::Closing)
                  .kind,
              WriteStatus::Written);
    EXPECT_LE(sink.bytes().size(), limit);

    ReadBack back = read_back(sink.bytes());
    EXPECT_TRUE(back.damage.empty()) << back.damage;
    ASSERT_EQ(back.blocks.size(), static_cast<size_t>(fitted) + 2);
    const BlockRef& capped = back.blocks[fitted];
    EXPECT_EQ(capped.thread_index, kGlobalThreadIndex);
    EXPECT_EQ(capped.sequence, kCappedSequence);
    EXPECT_EQ(capped.first_ts, 777u); // from the clock
    std::vector<Record> r = decode(back.payloads[fitted]);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].tag, Tag::Capped);
    EXPECT_EQ(r[0].count, before_capped);
    EXPECT_EQ(decode(back.payloads.back()).at(0).tag, Tag::TraceEnd);
}

TEST(TraceWriter, TheSinksOwnLimitCapsWhenItIsTheLower) {
    MemorySink sink;
    sink.set_limit(5000); // like RLIMIT_FSIZE
    TraceWriter w(sink, {.compress = false, .max_bytes = 1 << 20});
    w.start();
    std::vector<WriteStatus> s = fill(w, 10);
    auto capped = std::find_if(s.begin(), s.end(),
                               [](const WriteStatus& x) { return x.kind == WriteStatus::Capped; });
    ASSERT_NE(capped, s.end());
    EXPECT_EQ(capped->limit, 5000u);
    EXPECT_TRUE(capped->sink_limit);
    EXPECT_LE(sink.bytes().size(), 5000u);
    // Without a capped record's time from a clock, it takes the refused block's last time.
    ReadBack back = read_back(sink.bytes());
    ASSERT_FALSE(back.blocks.empty());
    EXPECT_EQ(back.blocks.back().sequence, kCappedSequence);
    EXPECT_EQ(back.blocks.back().first_ts, 20u + (capped - s.begin()));
}

TEST(TraceWriter, AFailingSinkStopsTheTraceOnceAndKeepsWholeBlocks) {
    MemorySink sink;
    sink.fail_after(3000, ENOSPC);
    TraceWriter w(sink, {.compress = false});
    w.start();
    std::vector<WriteStatus> s = fill(w, 5);
    EXPECT_EQ(s[0].kind, WriteStatus::Written);
    EXPECT_EQ(s[1].kind, WriteStatus::Written);
    EXPECT_EQ(s[2].kind, WriteStatus::Failed); // would end at 16 + 3 * 1072 > 3000
    EXPECT_EQ(s[2].error, ENOSPC);
    EXPECT_EQ(s[3].kind, WriteStatus::Dropped);
    EXPECT_TRUE(w.failed());
    EXPECT_EQ(sink.bytes().size(), sizeof(FileHeader) + 2 * (48 + 1024));
    std::vector<uint8_t> end = encode([](Encoder& e) { put::trace_end(e, 0); });
    EXPECT_EQ(w.write_block({0, 0, 0, 0}, end.data(), static_cast<uint32_t>(end.size()),
                            BlockRole::Closing)
                  .kind,
              WriteStatus::Dropped);
    ReadBack back = read_back(sink.bytes());
    EXPECT_TRUE(back.damage.empty()) << back.damage;
    EXPECT_EQ(back.blocks.size(), 2u);
}

TEST(TraceWriter, ResetStartsAnotherTraceWithNewOptions) {
    MemorySink first;
    TraceWriter w(first, {.compress = false, .max_bytes = 2000});
    w.start();
    fill(w, 3);
    EXPECT_TRUE(w.capped());
    w.reset({.compress = false, .max_bytes = 0});
    EXPECT_FALSE(w.stopped());
    EXPECT_EQ(w.bytes(), 0u);
    EXPECT_EQ(w.start().kind, WriteStatus::Written);
    EXPECT_EQ(fill(w, 3).back().kind, WriteStatus::Written);
}

TEST(NullSink, CountsWhatItDiscards) {
    NullSink sink;
    TraceWriter w(sink, {.compress = false});
    w.start();
    fill(w, 3);
    EXPECT_EQ(sink.bytes(), sizeof(FileHeader) + 3 * (48 + 1024));
    EXPECT_EQ(w.bytes(), sink.bytes());
}

class FileSinkTest : public testing::Test {
protected:
    void SetUp() override {
        std::string templ = (fs::temp_directory_path() / "gpuleak-sink-XXXXXX").string();
        dir_ = mkdtemp(templ.data());
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string dir_;
};

TEST_F(FileSinkTest, CreatesPrivateFilesAndNeverOverwritesOrFollowsLinks) {
    std::string path = dir_ + "/t.bin";
    mode_t old = umask(0);
    FileSink sink;
    ASSERT_EQ(sink.create(path.c_str()), 0);
    umask(old);
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    Piece piece{"abc", 3};
    EXPECT_EQ(sink.append(&piece, 1), 0);
    sink.close();
    EXPECT_EQ(fs::file_size(path), 3u);

    FileSink again;
    EXPECT_EQ(again.create(path.c_str()), EEXIST);
    EXPECT_EQ(fs::file_size(path), 3u);
    std::string link = dir_ + "/link.bin";
    fs::create_symlink(dir_ + "/target.bin", link);
    EXPECT_EQ(again.create(link.c_str()), EEXIST); // a dangling link is still a name taken
    EXPECT_FALSE(fs::exists(dir_ + "/target.bin"));
    EXPECT_FALSE(again.is_open());
    EXPECT_EQ(again.append(&piece, 1), EBADF);
}

// Past RLIMIT_FSIZE: the write fails with EFBIG, the file is cut back to its last whole append,
// and the process is not killed by SIGXFSZ (nor left with one pending). In a child, whose limit
// and signal state the test owns.
TEST_F(FileSinkTest, AWritePastTheFileSizeLimitFailsWholeAndRaisesNoSignal) {
    std::string path = dir_ + "/limited.bin";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        rlimit rl{4096, 4096};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(10);
        FileSink sink;
        if (sink.create(path.c_str()) != 0) _exit(11);
        if (sink.limit() != 4096) _exit(12);
        std::vector<uint8_t> a(3000, 1), b(2000, 2);
        Piece first{a.data(), a.size()};
        if (sink.append(&first, 1) != 0) _exit(13);
        Piece second[2] = {{b.data(), 1000}, {b.data() + 1000, 1000}};
        if (sink.append(second, 2) != EFBIG) _exit(14);
        struct stat st {};
        if (stat(path.c_str(), &st) != 0 || st.st_size != 3000) _exit(15);
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGXFSZ)) _exit(16);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(FileSinkTest, TheTraceFileReaderReadsWhatTheWriterWrote) {
    std::string path = dir_ + "/w.bin";
    FileSink sink;
    ASSERT_EQ(sink.create(path.c_str()), 0);
    TraceWriter w(sink);
    w.start();
    std::vector<uint8_t> records = compressible_records(300);
    w.write_block({3, 0, 5, 9}, records.data(), static_cast<uint32_t>(records.size()));
    sink.close();
    TraceFile f;
    ASSERT_TRUE(f.open(path)) << f.error();
    f.index_blocks();
    ASSERT_EQ(f.blocks().size(), 1u);
    std::vector<uint8_t> payload;
    ASSERT_TRUE(f.load(f.blocks()[0], payload));
    EXPECT_EQ(payload, records);
}

} // namespace
} // namespace gpuleak::format
