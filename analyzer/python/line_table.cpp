#include "python/line_table.h"

#include <climits>
#include <cstddef>

namespace gpuleak::pydecode {
namespace {

// 3.11+ varints: 6-bit little-endian chunks, 0x40 continues. Returns false past the end.
bool read_varint(std::span<const uint8_t> t, size_t& i, uint32_t& out) {
    uint32_t value = 0;
    for (unsigned shift = 0; i < t.size() && shift < 32; shift += 6) {
        uint8_t b = t[i++];
        value |= static_cast<uint32_t>(b & 63) << shift;
        if (!(b & 64)) {
            out = value;
            return true;
        }
    }
    return false;
}

bool read_svarint(std::span<const uint8_t> t, size_t& i, int& out) {
    uint32_t v = 0;
    if (!read_varint(t, i, v)) return false;
    out = (v & 1) ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
    return true;
}

} // namespace

int lnotab_line(std::span<const uint8_t> lnotab, int firstlineno, int byte_offset) {
    int line = firstlineno;
    int addr = 0;
    for (size_t i = 0; i + 1 < lnotab.size(); i += 2) {
        addr += lnotab[i];
        if (addr > byte_offset) break;
        line += static_cast<int8_t>(lnotab[i + 1]);
    }
    return line;
}

int linetable310_line(std::span<const uint8_t> table, int firstlineno, int byte_offset) {
    if (byte_offset < 0) return firstlineno;
    int end = 0;
    int computed = firstlineno;
    for (size_t i = 0; i + 1 < table.size(); i += 2) {
        int start = end;
        end += table[i];
        auto delta = static_cast<int8_t>(table[i + 1]);
        int line = -1;
        if (delta != -128) {
            computed += delta;
            line = computed;
        }
        if (start <= byte_offset && byte_offset < end) return line;
    }
    return -1;
}

int location_table_line(std::span<const uint8_t> table, int firstlineno, int byte_offset) {
    if (byte_offset < 0) return firstlineno;
    // 64 bits: a corrupt table's deltas may add up past int (only a valid one's result fits).
    int64_t line = firstlineno;
    int start = 0;
    size_t i = 0;
    while (i < table.size()) {
        uint8_t first = table[i++];
        if (!(first & 0x80)) return -1; // not an entry start: corrupt table
        int code = (first >> 3) & 15;
        int end = start + 2 * ((first & 7) + 1);
        int64_t entry_line = line;
        if (code == 15) {
            entry_line = -1;
        } else if (code == 13 || code == 14) {
            int delta = 0;
            if (!read_svarint(table, i, delta)) return -1;
            line += delta;
            entry_line = line;
        } else if (code >= 10) {
            line += code - 10;
            entry_line = line;
        }
        if (start <= byte_offset && byte_offset < end)
            return entry_line >= -1 && entry_line <= INT_MAX ? static_cast<int>(entry_line) : -1;
        // Columns and end lines are not needed: the next entry is the next byte with bit 7 set.
        while (i < table.size() && !(table[i] & 0x80))
            ++i;
        start = end;
    }
    return -1;
}

namespace {

// The entry of 3.11+'s location table that covers `byte_offset`: where its run of one position
// begins, and that position, its lines relative to firstlineno (columns -1 where none). -1 where
// the table cannot say.
int find_position(std::span<const uint8_t> table, int byte_offset, SourcePosition& found) {
    if (byte_offset < 0) return -1;
    int64_t line = 0;
    int start = 0;
    int run_start = 0;
    SourcePosition run{-1, -1, -1, -1};
    size_t i = 0;
    while (i < table.size()) {
        uint8_t first = table[i++];
        if (!(first & 0x80)) return -1;
        int code = (first >> 3) & 15;
        int end = start + 2 * ((first & 7) + 1);
        SourcePosition p{-1, -1, -1, -1};
        if (code == 15) {
            // no location
        } else if (code == 14) {
            int delta = 0;
            uint32_t end_delta = 0, column = 0, end_column = 0;
            if (!read_svarint(table, i, delta) || !read_varint(table, i, end_delta) ||
                !read_varint(table, i, column) || !read_varint(table, i, end_column))
                return -1;
            line += delta;
            p = {line, line + end_delta, int64_t{column} - 1, int64_t{end_column} - 1};
        } else if (code == 13) {
            int delta = 0;
            if (!read_svarint(table, i, delta)) return -1;
            line += delta;
            p = {line, line, -1, -1};
        } else if (code >= 10) {
            if (i + 2 > table.size()) return -1;
            line += code - 10;
            p = {line, line, table[i], table[i + 1]};
            i += 2;
        } else {
            if (i >= table.size()) return -1;
            int second = table[i++];
            int64_t column = code << 3 | (second >> 4 & 7);
            p = {line, line, column, column + (second & 15)};
        }
        if (start == 0 || !(p == run)) {
            run = p;
            run_start = start;
        }
        if (start <= byte_offset && byte_offset < end) {
            found = run;
            return run_start;
        }
        start = end;
    }
    return -1;
}

} // namespace

Location locate(uint32_t version_hex, std::span<const uint8_t> table, int firstlineno,
                int byte_offset) {
    Location out{byte_offset};
    if (version_hex >> 16 <= 0x030a) return out;
    SourcePosition p;
    const int start = find_position(table, byte_offset, p);
    if (start < 0) return out;
    out.start = start;
    if (p.column >= 0 && p.end_column >= 0 && p.end_line >= p.line) {
        out.has_position = true;
        out.position = {p.line + firstlineno, p.end_line + firstlineno, p.column, p.end_column};
    }
    return out;
}

bool source_position(uint32_t version_hex, std::span<const uint8_t> table, int firstlineno,
                     int byte_offset, SourcePosition& out) {
    const Location at = locate(version_hex, table, firstlineno, byte_offset);
    if (at.has_position) out = at.position;
    return at.has_position;
}

int position_start(uint32_t version_hex, std::span<const uint8_t> table, int byte_offset) {
    return locate(version_hex, table, 0, byte_offset).start;
}

int line_for_offset(uint32_t version_hex, std::span<const uint8_t> table, int firstlineno,
                    int byte_offset) {
    uint32_t major_minor = version_hex >> 16;
    int line;
    if (major_minor <= 0x0309) {
        line = lnotab_line(table, firstlineno, byte_offset);
    } else if (major_minor == 0x030a) {
        line = linetable310_line(table, firstlineno, byte_offset);
    } else {
        line = location_table_line(table, firstlineno, byte_offset);
    }
    return line < 0 ? 0 : line;
}

} // namespace gpuleak::pydecode
