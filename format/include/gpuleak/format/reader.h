// Reading a trace: never trusts a length, an index or a count from the file. A damaged block ends
// the readable prefix; everything before it is still reported (with a warning from the caller).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "gpuleak/format/records.h"

struct ZSTD_DCtx_s;

namespace gpuleak::format {

struct BlockRef {
    uint64_t offset; // of the payload in the file
    uint32_t stored_size;
    uint32_t raw_size;
    uint32_t flags;
    uint32_t thread_index;
    uint64_t sequence;
    uint64_t first_ts;
    uint64_t last_ts;
};

// One decoded record. Only the fields its tag defines are meaningful.
struct Record {
    Tag tag{};
    uint64_t ts = 0; // absolute (ns since trace start) for timed records
    Api api = Api::Unknown;
    MemKind kind = MemKind::Device;
    Space space = Space::Device;
    int64_t device = -1;
    uint64_t address = 0;
    uint64_t size = 0;
    uint64_t offset = 0;
    uint64_t handle = 0;
    uint64_t stack = 0;
    uint64_t py_stack = 0;
    int64_t result = 0;
    uint64_t free_bytes = 0; // 0 = unknown, else value + 1
    uint64_t total_bytes = 0;
    uint64_t count = 0;         // Capped: bytes written; PyInfo: version
    uint64_t id = 0;            // StackNode / PyStackNode
    uint64_t parent = 0;        // StackNode / PyStackNode
    uint64_t ip = 0;            // StackNode; PyStackNode: code id
    int64_t line_or_offset = 0; // PyStackNode: byte offset; PyCode: first line
    bool is_entry = false;
    std::string text;  // Module path, Thread name, Marker name, PyCode filename, Process exe
    std::string text2; // PyCode qualname
    std::vector<uint8_t> blob;                           // Module build-id, PyCode line table
    std::vector<std::string> strings;                    // Process: argv
    std::vector<std::string> strings2;                   // Process: environment
    std::vector<std::pair<uint64_t, uint64_t>> segments; // Module: (vaddr, memsz)
    uint64_t pid = 0, ppid = 0, start_unix_ns = 0;       // Process
};

// How many bytes of a version-2 block payload are records, before its time column (records.h);
// false where the column's size, in the payload's last kTimeTrailerBytes, does not fit.
bool block_records_size(const uint8_t* payload, size_t size, size_t& records);

// Decodes the records of one block payload in order.
class RecordCursor {
public:
    // Records whose time deltas are inside them (version 1, and tests of single records).
    RecordCursor(const uint8_t* begin, const uint8_t* end, uint64_t first_ts)
        : pos_(begin), end_(end), ts_(first_ts) {}
    // A whole block payload of a trace of `version` (records.h: a version-2 payload ends with its
    // time column). A payload whose column does not fit fails on the first next().
    static RecordCursor block(uint32_t version, const uint8_t* payload, size_t size,
                              uint64_t first_ts);
    // False at the end of the payload or on a malformed record (then error() is set).
    bool next(Record& out);
    const std::string& error() const { return error_; }
    // From here on, allocations and frees are read for what the analyzer's first pass uses: an
    // allocation's time, api, kind and stacks, a free's time, api and space. Their other fields
    // (device, address, size; address, result) are stepped over, not decoded, and keep whatever
    // the record held. The records read, their times and the errors met are a full decode's.
    void times_and_stacks_only() { times_and_stacks_only_ = true; }
    // A varint whose ten bytes the caller knows are there (or that the caller wrote itself), read
    // upward from `p` (records) or downward (the time column); false past ten bytes.
    template <bool kDownward>
    [[gnu::always_inline]] static bool unchecked_varint(const uint8_t*& p, uint64_t& v) {
        uint64_t b = kDownward ? *--p : *p++;
        v = b & 0x7F;
        for (int shift = 7; b & 0x80; shift += 7) {
            if (shift > 63) [[unlikely]]
                return false;
            b = kDownward ? *--p : *p++;
            v |= (b & 0x7F) << shift;
        }
        return true;
    }

private:
    // Inline: a record is mostly varints, and this is most of the reader's time. With ten bytes
    // left no byte can run past the end, so the loop checks only the varint's length.
    [[gnu::always_inline]] bool varint(uint64_t& v) {
        if (end_ - pos_ < 10) [[unlikely]]
            return varint_near_end(v);
        return unchecked_varint<false>(pos_, v) || varint_too_long();
    }
    // The next dt: from the time column (read downward, to the end of the records), or inline.
    [[gnu::always_inline]] bool time(uint64_t& v) {
        if (!column_) return varint(v);
        if (column_ - end_ < 10) [[unlikely]]
            return time_near_end(v);
        return unchecked_varint<true>(column_, v) || varint_too_long();
    }
    // Allocations and frees (most of a trace) decoded where every field's ten bytes are there,
    // through locals: stores into the record cannot then force the cursor to be reloaded.
    bool alloc_unchecked(Record& r);
    bool free_unchecked(Record& r);
    bool alloc_stacks_unchecked(Record& r);
    bool free_time_unchecked(Record& r);
    // What every one of those does once a record's fields are read: the cursor moves past them
    // (records at `p`, the time column at `column`) and the record takes its time.
    [[gnu::always_inline]] void end_record(const uint8_t* p, const uint8_t* column, uint64_t dt,
                                           Record& r) {
        pos_ = p;
        column_ = column;
        ts_ += dt;
        r.ts = ts_;
    }
    [[gnu::cold]] bool time_near_end(uint64_t& v);
    [[gnu::cold]] bool at_end();
    [[gnu::cold]] bool varint_near_end(uint64_t& v);
    [[gnu::cold]] bool varint_too_long();
    [[gnu::cold]] bool bad_kind();
    [[gnu::cold]] bool bad_space();
    bool string(std::string& s, size_t max = 1 << 20);
    const uint8_t* pos_;
    const uint8_t* end_;              // of the records; the time column begins here
    const uint8_t* column_ = nullptr; // just above the next time delta; null: deltas inline
    uint64_t ts_;
    bool times_and_stacks_only_ = false;
    std::string error_;
};

class TraceFile {
public:
    TraceFile() = default;
    TraceFile(const TraceFile&) = delete;
    TraceFile& operator=(const TraceFile&) = delete;
    ~TraceFile();

    // Opens and checks the header. On failure returns false and error() says what is wrong.
    bool open(const std::string& path);
    // The same for a trace held in memory (a test's TraceBuilder output).
    bool open_memory(std::vector<uint8_t> bytes);
    // Reads every block header, verifying checksums, up to the first damaged block.
    void index_blocks();
    const std::deque<BlockRef>& blocks() const { return blocks_; }
    // Set when the file ends with damaged or incomplete data: what was wrong and at which offset.
    const std::string& damage() const { return damage_; }
    const std::string& error() const { return error_; }
    uint64_t file_size() const { return file_size_; }
    uint32_t version() const { return version_; }

    // Loads (and decompresses) a block's payload.
    bool load(const BlockRef& block, std::vector<uint8_t>& payload);

private:
    bool check_header();
    // Reads exactly n bytes at `offset` of the file or the memory image.
    bool read_at(uint64_t offset, void* out, size_t n);

    int fd_ = -1;
    std::vector<uint8_t> memory_; // the trace, when opened with open_memory
    ZSTD_DCtx_s* zstd_ = nullptr; // one decompression context for every block
    uint64_t file_size_ = 0;
    uint32_t header_size_ = 0;
    uint32_t version_ = 0;
    // One entry per block, so it grows with the trace (48 bytes per 64 KiB of records): a deque,
    // which grows without copying itself, where a vector holds up to three times its entries while
    // it does. The merge keeps pointers into it.
    std::deque<BlockRef> blocks_;
    std::vector<uint8_t> scratch_;
    std::string damage_;
    std::string error_;
};

} // namespace gpuleak::format
