// Record encoding into a caller-owned buffer: no allocation, no locks, usable in the preload's hot
// path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>

#include "gpuleak/format/records.h"

namespace gpuleak::format {

inline constexpr size_t kMaxVarintBytes = 10;

inline uint64_t zigzag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t v) {
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Appends records upward from `begin` and their time deltas downward from `column_top` (the time
// column of a version-2 block, records.h), so room() is what lies between the two. Callers check
// room() for the worst case of a record before writing it, so individual puts never fail half-way
// through a record.
class Encoder {
public:
    Encoder(uint8_t* begin, uint8_t* column_top) : pos_(begin), col_(column_top) {}
    // Time deltas inside the records, as version 1 wrote them (tests of the reader's support).
    static Encoder with_inline_time(uint8_t* begin, uint8_t* end) {
        Encoder e(begin, end);
        e.inline_time_ = true;
        return e;
    }

    size_t room() const { return static_cast<size_t>(col_ - pos_); }
    uint8_t* position() const { return pos_; } // the end of the records
    uint8_t* column() const { return col_; }   // the lowest byte of the time column

    void u8(uint8_t v) { *pos_++ = v; }
    void tag(Tag t) { u8(static_cast<uint8_t>(t)); }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            *pos_++ = static_cast<uint8_t>(v | 0x80);
            v >>= 7;
        }
        *pos_++ = static_cast<uint8_t>(v);
    }
    void svarint(int64_t v) { varint(zigzag(v)); }
    void bytes(const void* data, size_t n) {
        varint(n);
        if (n) std::memcpy(pos_, data, n); // an empty span may have no data pointer
        pos_ += n;
    }
    void string(std::string_view s) { bytes(s.data(), s.size()); }
    // A record's dt: its varint's first byte highest, so the column reads downward.
    void time(uint64_t dt) {
        if (inline_time_) return varint(dt);
        while (dt >= 0x80) {
            *--col_ = static_cast<uint8_t>(dt | 0x80);
            dt >>= 7;
        }
        *--col_ = static_cast<uint8_t>(dt);
    }

private:
    uint8_t* pos_;
    uint8_t* col_;
    bool inline_time_ = false;
};

// Lays out a block payload from a buffer that holds `records` bytes of records at `payload` and
// `column` bytes of time column just below `column_top`: the column moves down behind the records
// and its size follows it. Returns the payload's size. The kTimeTrailerBytes at `column_top` must
// belong to the buffer.
inline uint32_t pack_block(uint8_t* payload, uint32_t records, uint8_t* column_top,
                           uint32_t column) {
    std::memmove(payload + records, column_top - column, column);
    uint8_t* trailer = payload + records + column;
    for (uint32_t i = 0; i < kTimeTrailerBytes; ++i)
        trailer[i] = static_cast<uint8_t>(column >> (8 * i));
    return records + column + kTimeTrailerBytes;
}

// One function per record, writing its fields in the order records.h gives (docs/trace-format.md),
// so every writer of traces (the recorder, trace_synth, the tests' TraceBuilder) writes the same
// bytes. `dt`: the delta from the previous timed record of the block, which goes to the time
// column. Callers make sure the room is there: kMaxFixedRecord for records without strings, plus
// the string lengths for the others.
inline constexpr size_t kMaxFixedRecord = 1 + 12 * kMaxVarintBytes;

namespace put {

inline void thread(Encoder& e, uint64_t tid, std::string_view name) {
    e.tag(Tag::Thread);
    e.varint(tid);
    e.string(name);
}
inline void stack_node(Encoder& e, uint64_t id, uint64_t parent, uint64_t ip) {
    e.tag(Tag::StackNode);
    e.varint(id);
    e.varint(parent);
    e.varint(ip);
}
inline void alloc(Encoder& e, uint64_t dt, Api api, MemKind kind, int64_t device, uint64_t address,
                  uint64_t size, uint64_t stack, uint64_t py_stack) {
    e.tag(Tag::Alloc);
    e.time(dt);
    e.varint(static_cast<uint64_t>(api));
    e.varint(static_cast<uint64_t>(kind));
    e.svarint(device);
    e.varint(address);
    e.varint(size);
    e.varint(stack);
    e.varint(py_stack);
}
inline void free(Encoder& e, uint64_t dt, Api api, Space space, uint64_t address, int64_t result) {
    e.tag(Tag::Free);
    e.time(dt);
    e.varint(static_cast<uint64_t>(api));
    e.varint(static_cast<uint64_t>(space));
    e.varint(address);
    e.svarint(result);
}
// `free_field` and `total_field` are stored as the device's free and total bytes + 1, 0 = unknown.
inline void alloc_failed(Encoder& e, uint64_t dt, Api api, MemKind kind, int64_t device,
                         uint64_t size, int64_t result, uint64_t stack, uint64_t py_stack,
                         uint64_t free_field, uint64_t total_field) {
    e.tag(Tag::AllocFailed);
    e.time(dt);
    e.varint(static_cast<uint64_t>(api));
    e.varint(static_cast<uint64_t>(kind));
    e.svarint(device);
    e.varint(size);
    e.svarint(result);
    e.varint(stack);
    e.varint(py_stack);
    e.varint(free_field);
    e.varint(total_field);
}
inline void vmm_retain(Encoder& e, uint64_t dt, uint64_t handle, uint64_t address) {
    e.tag(Tag::VmmRetain);
    e.time(dt);
    e.varint(handle);
    e.varint(address);
}
inline void vmm_release(Encoder& e, uint64_t dt, uint64_t handle) {
    e.tag(Tag::VmmRelease);
    e.time(dt);
    e.varint(handle);
}
inline void vmm_map(Encoder& e, uint64_t dt, uint64_t address, uint64_t size, uint64_t offset,
                    uint64_t handle) {
    e.tag(Tag::VmmMap);
    e.time(dt);
    e.varint(address);
    e.varint(size);
    e.varint(offset);
    e.varint(handle);
}
inline void vmm_unmap(Encoder& e, uint64_t dt, uint64_t address, uint64_t size) {
    e.tag(Tag::VmmUnmap);
    e.time(dt);
    e.varint(address);
    e.varint(size);
}
inline void marker(Encoder& e, uint64_t dt, std::string_view name) {
    e.tag(Tag::Marker);
    e.time(dt);
    e.string(name);
}
// The second field is reserved: always written as 0 (it was meant to count dropped events, which
// the recorder never drops), ignored by readers.
inline void trace_end(Encoder& e, uint64_t dt) {
    e.tag(Tag::TraceEnd);
    e.time(dt);
    e.varint(0);
}
inline void capped(Encoder& e, uint64_t dt, uint64_t bytes_written) {
    e.tag(Tag::Capped);
    e.time(dt);
    e.varint(bytes_written);
}
inline void py_code(Encoder& e, uint64_t code_id, std::string_view filename,
                    std::string_view qualname, int64_t firstlineno, const void* line_table,
                    size_t line_table_size) {
    e.tag(Tag::PyCode);
    e.varint(code_id);
    e.string(filename);
    e.string(qualname);
    e.svarint(firstlineno);
    e.bytes(line_table, line_table_size);
}
inline void py_stack_node(Encoder& e, uint64_t id, uint64_t parent, uint64_t code_id,
                          int64_t byte_offset, bool is_entry) {
    e.tag(Tag::PyStackNode);
    e.varint(id);
    e.varint(parent);
    e.varint(code_id);
    e.svarint(byte_offset);
    e.varint(is_entry ? 1 : 0);
}
// layout_source: 0 = the built-in tables, 1 = the interpreter's _Py_DebugOffsets.
inline void py_info(Encoder& e, uint64_t version_hex, uint64_t layout_source) {
    e.tag(Tag::PyInfo);
    e.varint(version_hex);
    e.varint(layout_source);
}
// `segments`: (p_vaddr, p_memsz) pairs of the PT_LOAD segments.
template <typename Segments>
void module(Encoder& e, uint64_t dt, uint64_t base, std::string_view path,
            std::string_view build_id, const Segments& segments) {
    e.tag(Tag::Module);
    e.time(dt);
    e.varint(base);
    e.string(path);
    e.string(build_id);
    e.varint(static_cast<uint64_t>(std::size(segments)));
    for (const auto& [vaddr, memsz] : segments) {
        e.varint(vaddr);
        e.varint(memsz);
    }
}
// `argv` and `env`: containers of strings.
template <typename Strings>
void process(Encoder& e, uint64_t pid, uint64_t ppid, uint64_t start_unix_ns, std::string_view exe,
             const Strings& argv, const Strings& env, std::string_view tool_version) {
    e.tag(Tag::Process);
    e.varint(pid);
    e.varint(ppid);
    e.varint(start_unix_ns);
    e.string(exe);
    e.varint(static_cast<uint64_t>(std::size(argv)));
    for (const auto& a : argv)
        e.string(a);
    e.varint(static_cast<uint64_t>(std::size(env)));
    for (const auto& v : env)
        e.string(v);
    e.string(tool_version);
}

} // namespace put
} // namespace gpuleak::format
