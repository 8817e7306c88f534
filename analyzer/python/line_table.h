// Offline line numbers for recorded Python frames: CPython's three line-table formats, decoded
// exactly as PyCode_Addr2Line does (half-open address ranges).
#pragma once

#include <cstdint>
#include <span>

namespace gpuleak::pydecode {

// The line of the instruction at `byte_offset`, picking the format from the interpreter's
// PY_VERSION_HEX. A negative offset (frame not started) gives firstlineno; an instruction with no
// line (CPython's -1) or an offset past the table gives 0.
int line_for_offset(uint32_t version_hex, std::span<const uint8_t> table, int firstlineno,
                    int byte_offset);

// The offset where the run of instructions sharing the source position (lines and columns) of the
// one at `byte_offset` begins: one call's instructions are one place. 3.11's specialized PRECALL
// of a builtin (sum, map, a method descriptor) runs the call itself, so a frame calling back into
// Python through it stops at the PRECALL once the call site has warmed up, and at the CALL before:
// two offsets of one call. Before 3.11 (no columns, no specialization) and where the table cannot
// say: `byte_offset` itself.
int position_start(uint32_t version_hex, std::span<const uint8_t> table, int byte_offset);

// The source position of the instruction at `byte_offset`, as co_positions() gives it: lines, and
// columns in UTF-8 bytes of the line, the end exclusive. From 3.11, where the table gives the
// columns; false otherwise (before 3.11, no columns, a malformed table).
struct SourcePosition {
    int64_t line, end_line, column, end_column;
    bool operator==(const SourcePosition&) const = default;
};
bool source_position(uint32_t version_hex, std::span<const uint8_t> table, int firstlineno,
                     int byte_offset, SourcePosition& out);

// position_start() and source_position() from one walk of the table.
struct Location {
    int start = 0;
    bool has_position = false;
    SourcePosition position{};
};
Location locate(uint32_t version_hex, std::span<const uint8_t> table, int firstlineno,
                int byte_offset);

// The individual decoders, with CPython's -1 for "no line". Tests compare them with the real
// PyCode_Addr2Line.
int lnotab_line(std::span<const uint8_t> lnotab, int firstlineno, int byte_offset);        // 3.9
int linetable310_line(std::span<const uint8_t> table, int firstlineno, int byte_offset);   // 3.10
int location_table_line(std::span<const uint8_t> table, int firstlineno, int byte_offset); // 3.11+

} // namespace gpuleak::pydecode
