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

// The individual decoders, with CPython's -1 for "no line". Tests compare them with the real
// PyCode_Addr2Line.
int lnotab_line(std::span<const uint8_t> lnotab, int firstlineno, int byte_offset);        // 3.9
int linetable310_line(std::span<const uint8_t> table, int firstlineno, int byte_offset);   // 3.10
int location_table_line(std::span<const uint8_t> table, int firstlineno, int byte_offset); // 3.11+

} // namespace gpuleak::pydecode
