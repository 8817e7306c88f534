// Record encoding into a caller-owned buffer: no allocation, no locks, usable in the preload's hot
// path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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

// Appends to [pos, end). Callers check room() for the worst case of a record before writing it,
// so individual puts never fail half-way through a record.
class Encoder {
public:
    Encoder(uint8_t* begin, uint8_t* end) : pos_(begin), end_(end) {}

    size_t room() const { return static_cast<size_t>(end_ - pos_); }
    uint8_t* position() const { return pos_; }

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
        std::memcpy(pos_, data, n);
        pos_ += n;
    }
    void string(std::string_view s) { bytes(s.data(), s.size()); }

private:
    uint8_t* pos_;
    uint8_t* end_;
};

uint32_t crc32(uint32_t crc, const void* data, size_t n);

// Fills in the magic and the checksum of a block header whose other fields are set, for the payload
// as stored (compressed or not). Writers call this last.
void seal_block_header(BlockHeader& header, const void* stored_payload);

} // namespace gpuleak::format
