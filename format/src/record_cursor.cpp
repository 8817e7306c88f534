#include "gpuleak/format/encoder.h" // zigzag
#include "gpuleak/format/reader.h"

#include <bit>
#include <cstring>

namespace gpuleak::format {
namespace {
// Counts in a record are bounded so a corrupt varint cannot make the reader allocate without limit.
constexpr uint64_t kMaxListEntries = 1 << 16;
// The most bytes an allocation's and a free's fields take after the tag (ten a varint), and a
// time delta in the column.
constexpr ptrdiff_t kAllocFieldBytes = 7 * 10, kFreeFieldBytes = 4 * 10, kTimeBytes = 10;

Api api_of(uint64_t v) {
    return v < static_cast<uint64_t>(Api::Count) ? static_cast<Api>(v) : Api::Unknown;
}
bool is_kind(uint64_t v) {
    return v < static_cast<uint64_t>(kMemKindCount);
}
bool is_space(uint64_t v) {
    return v <= static_cast<uint64_t>(Space::VmmHandle);
}

// Byte k of a (little-endian) word ends a varint when its top bit, bit 8k + 7, is clear: one
// 8-byte load finds the end of a field of up to 8 bytes (a device address takes 7). So
// times_and_stacks_only() steps over the fields it does not read, and word_varint decodes an
// address. Anything else (a longer field; for times_and_stacks_only(), an api, kind, space or
// device of more than one byte) takes the byte loop, so that all ways accept the same records
// and fail alike.
constexpr uint64_t kVarintEnds = 0x8080808080808080ull;

// Where the varint ending at the first set bit of `ends` ends.
const uint8_t* past_first_end(const uint8_t* word_start, uint64_t ends) {
    return word_start + std::countr_zero(ends) / 8 + 1;
}

uint64_t load_word(const uint8_t* p) {
    uint64_t word;
    std::memcpy(&word, p, sizeof word);
    return word;
}

// A varint of up to 8 bytes (at least 8 readable) decoded from one load: an address, whose 6 or 7
// bytes would take as many rounds of the byte loop. False for a longer one (p unmoved).
[[gnu::always_inline]] inline bool word_varint(const uint8_t*& p, uint64_t& v) {
    if constexpr (std::endian::native != std::endian::little) return false;
    const uint64_t word = load_word(p);
    const uint64_t ends = ~word & kVarintEnds;
    if (!ends) return false;
    // The bytes up to the first end, without their continuation bits; then the 7-bit groups
    // packed together, pairs into 14 bits, 14 into 28, 28 into 56.
    uint64_t x = word & (ends ^ (ends - 1)) & 0x7f7f7f7f7f7f7f7full;
    x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
    x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
    x = (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
    v = x;
    p = past_first_end(p, ends);
    return true;
}

} // namespace

bool RecordCursor::bad_kind() {
    error_ = "bad memory kind";
    return false;
}

bool RecordCursor::bad_space() {
    error_ = "bad address space";
    return false;
}

[[gnu::always_inline]] inline bool RecordCursor::alloc_unchecked(Record& r) {
    const uint8_t* p = pos_;
    const uint8_t* column = column_;
    auto field = [&p](uint64_t & v) __attribute__((always_inline)) {
        return unchecked_varint<false>(p, v);
    };
    uint64_t dt, api, kind, device, address, size, stack, py_stack;
    if (!unchecked_varint<true>(column, dt) || !field(api) || !field(kind))
        return varint_too_long();
    if (!is_kind(kind)) return bad_kind();
    if (!field(device) || !(word_varint(p, address) || field(address)) || !field(size) ||
        !field(stack) || !field(py_stack))
        return varint_too_long();
    end_record(p, column, dt, r);
    r.api = api_of(api);
    r.kind = static_cast<MemKind>(kind);
    r.device = unzigzag(device);
    r.address = address;
    r.size = size;
    r.stack = stack;
    r.py_stack = py_stack;
    return true;
}

[[gnu::always_inline]] inline bool RecordCursor::free_unchecked(Record& r) {
    const uint8_t* p = pos_;
    const uint8_t* column = column_;
    auto field = [&p](uint64_t & v) __attribute__((always_inline)) {
        return unchecked_varint<false>(p, v);
    };
    uint64_t dt, api, space, address, result;
    if (!unchecked_varint<true>(column, dt) || !field(api) || !field(space))
        return varint_too_long();
    if (!is_space(space)) return bad_space();
    if (!(word_varint(p, address) || field(address)) || !field(result)) return varint_too_long();
    end_record(p, column, dt, r);
    r.api = api_of(api);
    r.space = static_cast<Space>(space);
    r.address = address;
    r.result = unzigzag(result);
    return true;
}

[[gnu::always_inline]] inline bool RecordCursor::alloc_stacks_unchecked(Record& r) {
    if constexpr (std::endian::native != std::endian::little) return alloc_unchecked(r);
    const uint8_t* p = pos_;
    const uint8_t api = p[0], kind = p[1], device = p[2];
    if ((api | kind | device) & 0x80) [[unlikely]]
        return alloc_unchecked(r);
    const uint8_t* column = column_;
    uint64_t dt, stack, py_stack;
    if (!unchecked_varint<true>(column, dt)) return varint_too_long(); // first, as decoded
    if (!is_kind(kind)) return bad_kind();
    p += 3;
    for (int field = 0; field < 2; ++field) { // the address, then the size
        uint64_t ends = ~load_word(p) & kVarintEnds;
        if (!ends) [[unlikely]]
            return alloc_unchecked(r);
        p = past_first_end(p, ends);
    }
    if (!unchecked_varint<false>(p, stack) || !unchecked_varint<false>(p, py_stack))
        return varint_too_long();
    end_record(p, column, dt, r);
    r.api = api_of(api);
    r.kind = static_cast<MemKind>(kind);
    r.stack = stack;
    r.py_stack = py_stack;
    return true;
}

[[gnu::always_inline]] inline bool RecordCursor::free_time_unchecked(Record& r) {
    if constexpr (std::endian::native != std::endian::little) return free_unchecked(r);
    const uint8_t* p = pos_;
    const uint8_t api = p[0], space = p[1];
    if ((api | space) & 0x80) [[unlikely]]
        return free_unchecked(r);
    const uint8_t* column = column_;
    uint64_t dt;
    if (!unchecked_varint<true>(column, dt)) return varint_too_long(); // first, as decoded
    if (!is_space(space)) return bad_space();
    uint64_t ends = ~load_word(p + 2) & kVarintEnds;
    ends &= ends - 1; // the address's end cleared: the result's, if both fit in the word
    if (!ends) [[unlikely]]
        return free_unchecked(r);
    end_record(past_first_end(p + 2, ends), column, dt, r);
    r.api = api_of(api);
    r.space = static_cast<Space>(space);
    return true;
}

bool RecordCursor::varint_near_end(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (pos_ >= end_) {
            error_ = "record truncated";
            return false;
        }
        uint8_t b = *pos_++;
        v |= static_cast<uint64_t>(b & 0x7F) << shift;
        if (!(b & 0x80)) return true;
    }
    return varint_too_long();
}

bool block_records_size(const uint8_t* payload, size_t size, size_t& records) {
    if (size < kTimeTrailerBytes) return false;
    uint32_t column = 0;
    for (uint32_t i = 0; i < kTimeTrailerBytes; ++i)
        column |= static_cast<uint32_t>(payload[size - kTimeTrailerBytes + i]) << (8 * i);
    if (column > size - kTimeTrailerBytes) return false;
    records = size - kTimeTrailerBytes - column;
    return true;
}

RecordCursor RecordCursor::block(uint32_t version, const uint8_t* payload, size_t size,
                                 uint64_t first_ts) {
    RecordCursor c(payload, payload + size, first_ts);
    if (version < 2) return c;
    size_t records = 0;
    if (!block_records_size(payload, size, records)) {
        c.error_ = "block too short for its time column";
        c.pos_ = c.end_; // next() reads nothing
        c.column_ = c.end_;
        return c;
    }
    c.column_ = payload + size - kTimeTrailerBytes;
    c.end_ = payload + records;
    return c;
}

bool RecordCursor::time_near_end(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (column_ <= end_) {
            error_ = "time column shorter than its records";
            return false;
        }
        uint8_t b = *--column_;
        v |= static_cast<uint64_t>(b & 0x7F) << shift;
        if (!(b & 0x80)) return true;
    }
    return varint_too_long();
}

bool RecordCursor::at_end() {
    if (column_ && column_ != end_ && error_.empty())
        error_ = "time column longer than its records (" + std::to_string(column_ - end_) +
                 " bytes left)";
    return false;
}

bool RecordCursor::varint_too_long() {
    error_ = "varint too long";
    return false;
}

bool RecordCursor::string(std::string& s, size_t max) {
    uint64_t n;
    if (!varint(n)) return false;
    if (n > max || n > static_cast<uint64_t>(end_ - pos_)) {
        error_ = "string length out of range";
        return false;
    }
    s.assign(reinterpret_cast<const char*>(pos_), n);
    pos_ += n;
    return true;
}

bool RecordCursor::next(Record& r) {
    if (pos_ >= end_) return at_end();
    uint8_t tag = *pos_++;
    r.tag = static_cast<Tag>(tag);
    uint64_t v = 0;
    auto dt = [&]() __attribute__((always_inline)) {
        if (!time(v)) return false;
        ts_ += v;
        r.ts = ts_;
        return true;
    };
    auto u = [&](uint64_t & out) __attribute__((always_inline)) {
        return varint(out);
    };
    auto s = [&](int64_t & out) __attribute__((always_inline)) {
        if (!varint(v)) return false;
        out = unzigzag(v);
        return true;
    };
    auto api = [&]() __attribute__((always_inline)) {
        if (!varint(v)) return false;
        r.api = api_of(v);
        return true;
    };
    auto kind = [&]() __attribute__((always_inline)) {
        if (!varint(v)) return false;
        if (!is_kind(v)) return bad_kind();
        r.kind = static_cast<MemKind>(v);
        return true;
    };
    switch (r.tag) {
    case Tag::Process: {
        uint64_t n;
        if (!u(r.pid) || !u(r.ppid) || !u(r.start_unix_ns) || !string(r.text) || !u(n))
            return false;
        if (n > kMaxListEntries) return error_ = "too many arguments", false;
        r.strings.resize(n);
        for (auto& a : r.strings)
            if (!string(a)) return false;
        if (!u(n)) return false;
        if (n > kMaxListEntries) return error_ = "too many environment entries", false;
        r.strings2.resize(n);
        for (auto& e : r.strings2)
            if (!string(e)) return false;
        std::string version;
        return string(version);
    }
    case Tag::Module: {
        uint64_t n;
        std::string build_id;
        if (!dt() || !u(r.address) || !string(r.text) || !string(build_id, 256) || !u(n))
            return false;
        r.blob.assign(build_id.begin(), build_id.end());
        if (n > 64) return error_ = "too many segments", false;
        r.segments.resize(n);
        for (auto& [vaddr, memsz] : r.segments)
            if (!u(vaddr) || !u(memsz)) return false;
        return true;
    }
    case Tag::Thread:
        return u(r.pid) && string(r.text, 4096);
    case Tag::StackNode:
        return u(r.id) && u(r.parent) && u(r.ip);
    case Tag::Alloc:
        if (column_ && end_ - pos_ >= kAllocFieldBytes && column_ - end_ >= kTimeBytes) [[likely]]
            return times_and_stacks_only_ ? alloc_stacks_unchecked(r) : alloc_unchecked(r);
        return dt() && api() && kind() && s(r.device) && u(r.address) && u(r.size) && u(r.stack) &&
               u(r.py_stack);
    case Tag::Free: {
        if (column_ && end_ - pos_ >= kFreeFieldBytes && column_ - end_ >= kTimeBytes) [[likely]]
            return times_and_stacks_only_ ? free_time_unchecked(r) : free_unchecked(r);
        if (!dt() || !api() || !u(v)) return false;
        if (!is_space(v)) return bad_space();
        r.space = static_cast<Space>(v);
        return u(r.address) && s(r.result);
    }
    case Tag::AllocFailed:
        return dt() && api() && kind() && s(r.device) && u(r.size) && s(r.result) && u(r.stack) &&
               u(r.py_stack) && u(r.free_bytes) && u(r.total_bytes);
    case Tag::VmmRetain:
        return dt() && u(r.handle) && u(r.address);
    case Tag::VmmRelease:
        return dt() && u(r.handle);
    case Tag::VmmMap:
        return dt() && u(r.address) && u(r.size) && u(r.offset) && u(r.handle);
    case Tag::VmmUnmap:
        return dt() && u(r.address) && u(r.size);
    case Tag::Marker:
        return dt() && string(r.text, 4096);
    case Tag::TraceEnd: // its second field is reserved (always 0)
        return dt() && u(v);
    case Tag::Capped:
        return dt() && u(r.count);
    case Tag::PyCode: {
        std::string table;
        if (!u(r.ip) || !string(r.text, 4096) || !string(r.text2, 4096) || !s(r.line_or_offset) ||
            !string(table))
            return false;
        r.blob.assign(table.begin(), table.end());
        return true;
    }
    case Tag::PyStackNode: {
        uint64_t entry;
        if (!u(r.id) || !u(r.parent) || !u(r.ip) || !s(r.line_or_offset) || !u(entry)) return false;
        r.is_entry = entry != 0;
        return true;
    }
    case Tag::PyInfo:
        return u(r.count) && u(r.handle);
    }
    error_ = "unknown record tag " + std::to_string(tag);
    return false;
}

} // namespace gpuleak::format
