#include <array>
#include <cstddef>

#include "gpuleak/format/writer.h"

namespace gpuleak::format {
namespace {

// Slicing-by-4 CRC-32 (IEEE): blocks are checksummed by the writer thread, so a table is fast
// enough and keeps the format free of CPU-specific instructions.
constexpr std::array<std::array<uint32_t, 256>, 4> make_tables() {
    std::array<std::array<uint32_t, 256>, 4> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
        for (int s = 1; s < 4; ++s)
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
}
constexpr auto kTables = make_tables();

uint32_t crc32(uint32_t crc, const void* data, size_t n) {
    auto p = static_cast<const uint8_t*>(data);
    crc = ~crc;
    while (n >= 4) {
        crc ^= static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
               static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
        crc = kTables[3][crc & 0xFF] ^ kTables[2][(crc >> 8) & 0xFF] ^
              kTables[1][(crc >> 16) & 0xFF] ^ kTables[0][crc >> 24];
        p += 4;
        n -= 4;
    }
    while (n--)
        crc = kTables[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

} // namespace

uint32_t block_checksum(const BlockHeader& h, const void* stored_payload, size_t stored_size) {
    uint32_t crc = crc32(0, &h.flags, sizeof h - offsetof(BlockHeader, flags));
    return crc32(crc, stored_payload, stored_size);
}

} // namespace gpuleak::format
