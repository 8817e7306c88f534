// trace_floor: what no analyzer or encoding of a given trace can beat, so that scripts/bench.sh
// can show how far a target sits from its floor (docs/performance.md, "Targets").
//
//   trace_floor decode TRACE THREADS [first-pass]
//                                      every block decompressed and every record decoded, and
//                                      nothing else, on THREADS threads (blocks dealt in turn):
//                                      gpuleak-report's second pass without its analysis; with
//                                      `first-pass`, records read as its first pass reads them
//                                      (allocations' times and stacks, frees' times)
//   trace_floor size TRACE             the trace's bytes, and its bytes with every block's time
//                                      column left out (the records recompressed as the tracer
//                                      compresses them, zstd level 1; headers as they are): a
//                                      trace with no time per event could not be smaller
//
// Both print `events=N` (allocations and frees, as the bench counts them) and their measure.
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gpuleak/format/reader.h"

namespace {

using gpuleak::format::BlockRef;
using gpuleak::format::Record;
using gpuleak::format::RecordCursor;
using gpuleak::format::Tag;
using gpuleak::format::TraceFile;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "trace_floor: %s\n", what.c_str());
    std::exit(1);
}

void open(TraceFile& file, const char* path) {
    if (!file.open(path)) fail(std::string(path) + ": " + file.error());
}

// Allocations and frees in one block's payload.
uint64_t count_events(const TraceFile& file, const BlockRef& block,
                      const std::vector<uint8_t>& payload, bool first_pass = false) {
    auto cursor =
        RecordCursor::block(file.version(), payload.data(), payload.size(), block.first_ts);
    if (first_pass) cursor.times_and_stacks_only();
    uint64_t events = 0;
    Record r;
    while (cursor.next(r))
        events += r.tag == Tag::Alloc || r.tag == Tag::Free;
    if (!cursor.error().empty()) fail("a block does not decode: " + cursor.error());
    return events;
}

int decode(const char* path, unsigned threads, bool first_pass) {
    TraceFile index;
    open(index, path);
    index.index_blocks();
    const std::vector<BlockRef> blocks(index.blocks().begin(), index.blocks().end());
    std::atomic<uint64_t> events{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            TraceFile file;
            open(file, path);
            std::vector<uint8_t> payload;
            uint64_t mine = 0;
            for (size_t i = t; i < blocks.size(); i += threads) {
                if (!file.load(blocks[i], payload)) fail("a block does not load: " + file.error());
                mine += count_events(file, blocks[i], payload, first_pass);
            }
            events += mine;
        });
    for (std::thread& w : workers)
        w.join();
    const auto wall = std::chrono::steady_clock::now() - start;
    std::printf("events=%llu wall_ns=%lld\n", static_cast<unsigned long long>(events.load()),
                static_cast<long long>(std::chrono::nanoseconds(wall).count()));
    return 0;
}

int size(const char* path) {
    TraceFile file;
    open(file, path);
    if (file.version() < 2) fail("a version-2 trace is needed (its time in a column)");
    file.index_blocks();
    ZSTD_CCtx* zstd = ZSTD_createCCtx();
    if (!zstd) fail("out of memory");
    std::vector<uint8_t> payload, compressed;
    uint64_t events = 0, stored = 0, stored_without_time = 0;
    for (const BlockRef& block : file.blocks()) {
        if (!file.load(block, payload)) fail("a block does not load: " + file.error());
        events += count_events(file, block, payload);
        size_t records = 0;
        if (!gpuleak::format::block_records_size(payload.data(), payload.size(), records))
            fail("a block too short for its time column");
        compressed.resize(ZSTD_compressBound(records));
        const size_t n = ZSTD_compressCCtx(zstd, compressed.data(), compressed.size(),
                                           payload.data(), records, 1);
        if (ZSTD_isError(n)) fail(ZSTD_getErrorName(n));
        stored += block.stored_size;
        stored_without_time += std::min(n, records); // the writer stores a block raw where smaller
    }
    ZSTD_freeCCtx(zstd);
    const uint64_t framing = file.file_size() - stored; // the file header and the block headers
    std::printf("events=%llu bytes=%llu bytes_without_time=%llu\n",
                static_cast<unsigned long long>(events),
                static_cast<unsigned long long>(file.file_size()),
                static_cast<unsigned long long>(framing + stored_without_time));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool first_pass = argc == 5 && std::string(argv[4]) == "first-pass";
    if (mode == "decode" && (argc == 4 || first_pass) && std::atoi(argv[3]) > 0)
        return decode(argv[2], static_cast<unsigned>(std::atoi(argv[3])), first_pass);
    if (mode == "size" && argc == 3) return size(argv[2]);
    std::fprintf(stderr,
                 "usage: trace_floor decode TRACE THREADS [first-pass] | trace_floor size TRACE\n");
    return 2;
}
