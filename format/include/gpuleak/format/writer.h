// Writing a trace: the file header, block framing (header, optional zstd, checksum) and the size
// limit, over a sink that keeps the bytes (a file, memory, nowhere). The preload, the benchmarks
// and the tests all write through this, as they all read through reader.h.
//
// No locks (the caller serializes calls) and no heap allocation per block: the preload writes from
// inside someone else's process, at exit and in forked children too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuleak/format/encoder.h"
#include "gpuleak/format/records.h"

struct ZSTD_CCtx_s;

namespace gpuleak::format {

// The CRC-32 a block header carries: of the header bytes after the checksum field, then of the
// payload as stored (compressed or not). The reader checks blocks with this same function.
uint32_t block_checksum(const BlockHeader& header, const void* stored_payload, size_t stored_size);

// A file header: magic, `version`, header size.
FileHeader file_header(uint32_t version = kFormatVersion);

// One contiguous piece of what a sink is asked to append.
struct Piece {
    const void* data;
    size_t size;
};

// Where the bytes of a trace go.
class Sink {
public:
    // Appends the pieces in order, whole or not at all: after a failure the sink holds exactly what
    // it held before the call. Returns 0, or an errno value.
    virtual int append(const Piece* pieces, size_t count) = 0;
    // How many bytes the sink can hold in all (0: no limit of its own). A file: the process's file
    // size limit (RLIMIT_FSIZE), read on every call.
    virtual uint64_t limit() { return 0; }

protected:
    ~Sink() = default;
};

// A trace file. Appends each block with one writev(2); after a failed or partial write the file is
// cut back to its size before the call, so a full disk leaves a trace that reads to its last whole
// block. A write past RLIMIT_FSIZE raises SIGXFSZ (whose default action kills the process): the
// signal is blocked around the call and a SIGXFSZ that only this write raised is taken back, so the
// process's own disposition is neither used nor changed.
class FileSink final : public Sink {
public:
    FileSink() = default;
    ~FileSink() { close(); }
    FileSink(const FileSink&) = delete;
    FileSink& operator=(const FileSink&) = delete;

    // Creates `path` (mode 0600, O_EXCL|O_NOFOLLOW: never over an existing file, never through a
    // symbolic link) and closes a file opened before. 0, or an errno value.
    int create(const char* path);
    void close();
    // Forgets the file without writing to it (a forked child must not touch its parent's file).
    void abandon();
    bool is_open() const { return fd_ >= 0; }

    int append(const Piece* pieces, size_t count) override;
    uint64_t limit() override;

private:
    int fd_ = -1;
    uint64_t size_ = 0;
};

// A trace in memory, for tests and tools. fail_after() and set_limit() stand in for a full disk
// and a file size limit.
class MemorySink final : public Sink {
public:
    int append(const Piece* pieces, size_t count) override;
    uint64_t limit() override { return limit_; }

    const std::vector<uint8_t>& bytes() const { return bytes_; }
    std::vector<uint8_t> take() { return std::move(bytes_); }
    // The next append that would take the sink past `bytes` fails with `error` (ENOSPC: a disk that
    // fills up there).
    void fail_after(uint64_t bytes, int error);
    void set_limit(uint64_t bytes) { limit_ = bytes; }

private:
    std::vector<uint8_t> bytes_;
    uint64_t fail_after_ = ~0ull;
    int fail_error_ = 0;
    uint64_t limit_ = 0;
};

// Counts the bytes and keeps none (benchmarks of everything but the disk).
class NullSink final : public Sink {
public:
    int append(const Piece* pieces, size_t count) override;
    uint64_t bytes() const { return bytes_; }

private:
    uint64_t bytes_ = 0;
};

// What a block header says besides its framing.
struct BlockMeta {
    uint32_t thread_index = 0;
    uint64_t sequence = 0;
    uint64_t first_ts = 0;
    uint64_t last_ts = 0;
};

enum class BlockRole : uint8_t {
    Events,  // any block
    Closing, // the block holding the TraceEnd record: written even once the trace is capped, into
             // the room kept for it below the size limit
};

struct WriterOptions {
    bool compress = true;   // zstd level 1, where that makes the block smaller
    uint64_t max_bytes = 0; // the trace never grows past this (0: no limit but the sink's)
    // The time of a Capped record (ns since the trace started). Without one: the last_ts of the
    // block that did not fit.
    uint64_t (*clock)() = nullptr;
};

// The outcome of one write. Failed and Capped are returned once, by the write that stopped the
// trace; every later write returns Dropped (except a Closing block into a capped trace).
struct WriteStatus {
    enum Kind : uint8_t {
        Written,
        Dropped, // the trace has stopped, or the block is empty
        Failed,  // the sink refused the bytes (error); the trace has stopped
        Capped,  // the block did not fit below the limit; a Capped record ends the trace
    } kind = Written;
    int error = 0;           // Failed: the errno value
    uint64_t limit = 0;      // Capped: the limit reached
    bool sink_limit = false; // Capped: the limit was the sink's (RLIMIT_FSIZE), not max_bytes
};

// A block framed and ready to append: its header and its payload as stored.
struct FramedBlock {
    BlockHeader header;
    const uint8_t* stored;
};

// Frames blocks and hands them to a sink, keeping the trace within its size limit: room for two
// small blocks is always kept below the limit, for the Capped record and for the TraceEnd record of
// a clean exit, so a capped trace still tells a clean exit from a crash.
class TraceWriter {
public:
    explicit TraceWriter(Sink& sink, const WriterOptions& options = {});
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    // Starts a new trace (on a sink that is empty): writes the file header.
    WriteStatus start();
    // Starts over with other options, keeping the compression context and buffer (a forked child's
    // trace, on a new file).
    void reset(const WriterOptions& options);

    // Frames a block payload of `size` bytes (at most kMaxBlockPayload; pack_block lays it out) and
    // appends it.
    WriteStatus write_block(const BlockMeta& meta, const uint8_t* payload, uint32_t size,
                            BlockRole role = BlockRole::Events);
    // Frames a block without writing it; `stored` stays valid until the next call.
    FramedBlock frame(const BlockMeta& meta, const uint8_t* payload, uint32_t size);

    bool failed() const { return failed_; }
    bool capped() const { return capped_; }
    bool stopped() const { return failed_ || capped_; }
    uint64_t bytes() const { return bytes_; } // appended so far, file header included
    Sink& sink() { return sink_; }

    // The most a Capped (or TraceEnd) block takes: header, tag, two varints and the time trailer.
    static constexpr uint64_t kSmallBlockBytes =
        sizeof(BlockHeader) + 1 + 2 * kMaxVarintBytes + kTimeTrailerBytes;

private:
    WriteStatus append(const Piece* pieces, size_t count);
    WriteStatus cap(uint64_t limit, bool sink_limit, uint64_t ts);
    bool ensure_compression(size_t size);

    Sink& sink_;
    WriterOptions options_;
    uint64_t bytes_ = 0;
    bool failed_ = false;
    bool capped_ = false;
    ZSTD_CCtx_s* zstd_ = nullptr;
    uint8_t* compressed_ = nullptr; // mapped pages, not the heap
    size_t compressed_capacity_ = 0;
};

} // namespace gpuleak::format
