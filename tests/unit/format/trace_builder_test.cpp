// TraceBuilder writes traces laid out as the preload writes them: checked record by record
// through the reader, in memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include <unistd.h>

#include "gpuleak/format/reader.h"
#include "gpuleak/format/trace_builder.h"

namespace gpuleak::format {
namespace {

struct Block {
    BlockRef ref;
    std::vector<Record> records;
};

std::vector<Block> blocks_of(const std::vector<uint8_t>& bytes) {
    TraceFile f;
    EXPECT_TRUE(f.open_memory(bytes)) << f.error();
    f.index_blocks();
    EXPECT_TRUE(f.damage().empty()) << f.damage();
    std::vector<Block> out;
    for (const BlockRef& b : f.blocks()) {
        std::vector<uint8_t> payload;
        EXPECT_TRUE(f.load(b, payload));
        Block block{b, {}};
        auto c = RecordCursor::block(f.version(), payload.data(), payload.size(), b.first_ts);
        Record r;
        while (c.next(r))
            block.records.push_back(r);
        EXPECT_TRUE(c.error().empty()) << c.error();
        out.push_back(block);
    }
    return out;
}

std::vector<Tag> tags(const Block& b) {
    std::vector<Tag> out;
    for (const Record& r : b.records)
        out.push_back(r.tag);
    return out;
}

TEST(TraceBuilder, WritesProcessWideRecordsThreadsStacksAndEvents) {
    TraceBuilder b;
    b.process({.pid = 77, .exe = "/usr/bin/train", .argv = {"train", "--fast"}});
    b.module({.path = "/usr/bin/train", .base = 0x400000, .segments = {{0, 0x5000}}});
    ThreadRef t = b.thread(1001, "main");
    uint64_t s1 = b.stack(t, {0x401234, 0x401100, 0x400f00});
    uint64_t s2 = b.stack(t, {0x401300, 0x401100, 0x400f00}); // shares two outer frames
    EXPECT_EQ(b.stack(t, {0x401234, 0x401100, 0x400f00}), s1);
    EXPECT_EQ(b.stack(t, {}), 0u);
    b.alloc(t, 1000, 0xa000, 4096, s1);
    b.alloc(t, 1500, 0xb000, 100, s2, {.api = Api::cudaMalloc, .device = 1});
    b.free(t, 2000, 0xa000);
    b.end(3000);

    std::vector<Block> blocks = blocks_of(b.bytes());
    ASSERT_EQ(blocks.size(), 4u);
    // Process and module, each in a process-wide block of its own, numbered 0, 1.
    EXPECT_EQ(blocks[0].ref.thread_index, kGlobalThreadIndex);
    EXPECT_EQ(blocks[0].ref.sequence, 0u);
    EXPECT_EQ(blocks[0].records.at(0).pid, 77u);
    EXPECT_EQ(blocks[0].records[0].strings, (std::vector<std::string>{"train", "--fast"}));
    EXPECT_EQ(blocks[1].ref.sequence, 1u);
    EXPECT_EQ(blocks[1].records.at(0).address, 0x400000u);
    // The thread: announced, nodes defined outermost first before the events that use them.
    const Block& thread = blocks[2];
    EXPECT_EQ(thread.ref.thread_index, 1u);
    EXPECT_EQ(thread.ref.sequence, 0u);
    EXPECT_EQ(thread.ref.first_ts, 1000u);
    EXPECT_EQ(thread.ref.last_ts, 2000u);
    EXPECT_EQ(tags(thread),
              (std::vector<Tag>{Tag::Thread, Tag::StackNode, Tag::StackNode, Tag::StackNode,
                                Tag::StackNode, Tag::Alloc, Tag::Alloc, Tag::Free}));
    EXPECT_EQ(thread.records[0].pid, 1001u);
    EXPECT_EQ(thread.records[0].text, "main");
    const Record& outer = thread.records[1];
    EXPECT_EQ(outer.id, 1u);
    EXPECT_EQ(outer.parent, 0u);
    EXPECT_EQ(outer.ip, 0x400f00u);
    EXPECT_EQ(thread.records[3].id, s1);
    EXPECT_EQ(thread.records[3].ip, 0x401234u);
    EXPECT_EQ(thread.records[4].id, s2);
    EXPECT_EQ(thread.records[4].parent, thread.records[2].id);
    const Record& a = thread.records[5];
    EXPECT_EQ(a.ts, 1000u);
    EXPECT_EQ(a.address, 0xa000u);
    EXPECT_EQ(a.size, 4096u);
    EXPECT_EQ(a.stack, s1);
    EXPECT_EQ(a.api, Api::cuMemAlloc_v2);
    EXPECT_EQ(thread.records[6].ts, 1500u);
    EXPECT_EQ(thread.records[6].api, Api::cudaMalloc);
    EXPECT_EQ(thread.records[6].device, 1);
    EXPECT_EQ(thread.records[7].ts, 2000u);
    EXPECT_EQ(thread.records[7].api, Api::cuMemFree_v2);
    // TraceEnd last, after every thread's block.
    EXPECT_EQ(blocks[3].ref.thread_index, kGlobalThreadIndex);
    EXPECT_EQ(blocks[3].ref.first_ts, 3000u);
    EXPECT_EQ(tags(blocks[3]), std::vector<Tag>{Tag::TraceEnd});
}

TEST(TraceBuilder, PythonStacksFailedAllocationsVmmAndMarkers) {
    TraceBuilder b({.compress = false});
    ThreadRef t = b.thread(5);
    uint64_t train = b.py_code(t, "train.py", "train", 10, {0x01, 0x02});
    uint64_t step = b.py_code(t, "train.py", "step", 20);
    uint64_t py = b.py_stack(t, {{step, 8, false}, {train, 4, true}});
    EXPECT_EQ(b.py_stack(t, {{step, 8, false}, {train, 4, true}}), py);
    b.marker(t, 10);
    b.alloc_failed(t, 20, 1 << 30, 0, {.py_stack = py, .free_bytes = 0, .total_bytes = 1ull << 34});
    b.vmm_create(t, 30, 0x77, 2 << 20);
    b.vmm_map(t, 40, 0xc0000000, 2 << 20, 0, 0x77);
    b.vmm_retain(t, 50, 0x77, 0xc0000000);
    b.vmm_release(t, 60, 0x77);
    b.vmm_unmap(t, 70, 0xc0000000, 2 << 20);
    b.vmm_release(t, 80, 0x77);
    std::vector<Block> blocks = blocks_of(b.bytes());
    ASSERT_EQ(blocks.size(), 1u);
    const auto& r = blocks[0].records;
    EXPECT_EQ(
        tags(blocks[0]),
        (std::vector<Tag>{Tag::Thread, Tag::PyCode, Tag::PyCode, Tag::PyStackNode, Tag::PyStackNode,
                          Tag::Marker, Tag::AllocFailed, Tag::Alloc, Tag::VmmMap, Tag::VmmRetain,
                          Tag::VmmRelease, Tag::VmmUnmap, Tag::VmmRelease}));
    EXPECT_EQ(r[1].ip, train);
    EXPECT_EQ(r[1].blob, (std::vector<uint8_t>{1, 2}));
    EXPECT_EQ(r[2].ip, step);
    EXPECT_EQ(r[3].ip, train); // outermost first
    EXPECT_TRUE(r[3].is_entry);
    EXPECT_EQ(r[4].parent, r[3].id);
    EXPECT_EQ(r[4].line_or_offset, 8);
    EXPECT_EQ(r[5].text, "gpuleak_mark_iteration");
    EXPECT_EQ(r[6].py_stack, py);
    EXPECT_EQ(r[6].free_bytes, 1u); // known: 0 bytes free, stored + 1
    EXPECT_EQ(r[6].total_bytes, (1ull << 34) + 1);
    EXPECT_EQ(r[6].result, 2);
    EXPECT_EQ(r[7].api, Api::cuMemCreate);
    EXPECT_EQ(r[7].address, 0x77u);
    EXPECT_EQ(r[12].ts, 80u);
}

TEST(TraceBuilder, BlocksSplitWhereTheyFillAndThreadsInterleave) {
    TraceBuilder b({.compress = true, .block_bytes = 512});
    ThreadRef t1 = b.thread(1), t2 = b.thread(2);
    for (uint64_t i = 0; i < 100; ++i) {
        b.alloc(t1, 10 * i, 0x1000 + i, 8);
        b.alloc(t2, 10 * i + 5, 0x9000 + i, 8);
    }
    std::vector<Block> blocks = blocks_of(b.bytes());
    std::map<uint32_t, uint64_t> next_sequence, allocs, last_ts;
    for (const Block& block : blocks) {
        uint32_t thread = block.ref.thread_index;
        EXPECT_EQ(block.ref.sequence, next_sequence[thread]++);
        EXPECT_LE(block.ref.raw_size, 512u);
        for (const Record& r : block.records)
            if (r.tag == Tag::Alloc) {
                ++allocs[thread];
                EXPECT_GE(r.ts, last_ts[thread]);
                last_ts[thread] = r.ts;
                EXPECT_EQ(r.ts % 10, thread == 1 ? 0u : 5u);
            }
    }
    EXPECT_GT(next_sequence[1], 2u);
    EXPECT_EQ(allocs[1], 100u);
    EXPECT_EQ(allocs[2], 100u);
    EXPECT_EQ(last_ts[2], 995u);
}

TEST(TraceBuilder, HolesCapsRawNodesAndChosenIndexes) {
    TraceBuilder b;
    ThreadRef t = b.thread(1, "", 7);
    EXPECT_EQ(t.index, 7u);
    EXPECT_EQ(b.thread(2).index, 1u);
    b.alloc(t, 1, 0x10, 1);
    b.end_block(t);
    b.skip_blocks(t, 2);
    b.stack_node(t, 65535, 12345, 0xdead); // a parent never defined
    b.alloc(t, 2, 0x20, 1, 65535);
    b.capped(3, 4096);
    std::vector<Block> blocks = blocks_of(b.bytes());
    std::vector<std::pair<uint32_t, uint64_t>> ids;
    for (const Block& block : blocks)
        ids.emplace_back(block.ref.thread_index, block.ref.sequence);
    // Thread 7's blocks 0 and 3 (1 and 2 never written), the capped block, thread 1's.
    EXPECT_EQ(ids, (std::vector<std::pair<uint32_t, uint64_t>>{
                       {7, 0}, {0, kCappedSequence}, {1, 0}, {7, 3}}));
    EXPECT_EQ(blocks[1].records.at(0).count, 4096u);
    EXPECT_EQ(blocks[3].records.at(0).parent, 12345u);
}

TEST(TraceBuilder, MisuseIsRefusedLoudly) {
    TraceBuilder b;
    ThreadRef t = b.thread(1);
    b.alloc(t, 100, 0x10, 1);
    EXPECT_THROW(b.free(t, 99, 0x10), std::invalid_argument); // time going backwards
    EXPECT_THROW(b.alloc(ThreadRef{42}, 1, 0x10, 1), std::invalid_argument);
    EXPECT_THROW(b.thread(2, "", 1), std::invalid_argument);
    EXPECT_THROW(TraceBuilder({.block_bytes = 0}), std::invalid_argument);
    // Another thread may be earlier: threads are merged by time.
    ThreadRef u = b.thread(2);
    EXPECT_NO_THROW(b.alloc(u, 5, 0x20, 1));
}

TEST(TraceBuilder, WritesFilesAndStreamsIntoASink) {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("builder_test_" + std::to_string(getpid()) + ".bin"))
                           .string();
    TraceBuilder b;
    ThreadRef t = b.thread(1);
    b.alloc(t, 1, 0x10, 1);
    b.write(path);
    TraceFile f;
    ASSERT_TRUE(f.open(path)) << f.error();
    f.index_blocks();
    EXPECT_EQ(f.blocks().size(), 1u);
    EXPECT_EQ(f.file_size(), b.bytes().size());
    std::filesystem::remove(path);

    NullSink sink;
    TraceBuilder streamed(sink);
    ThreadRef s = streamed.thread(1);
    for (uint64_t i = 0; i < 10000; ++i)
        streamed.alloc(s, i, 0x1000 * i, 64);
    streamed.finish();
    EXPECT_EQ(sink.bytes(), streamed.bytes_written());
    EXPECT_GT(sink.bytes(), sizeof(FileHeader) + 2 * sizeof(BlockHeader));
    EXPECT_THROW(streamed.bytes(), std::invalid_argument);
}

} // namespace
} // namespace gpuleak::format
