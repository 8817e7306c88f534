// Reading DWARF call frame data in place, in a loaded module's memory: fixed-size values, LEB128
// numbers and encoded pointers (DW_EH_PE_*), every read checked against the end of the span it may
// read.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpuleak::unwind {

// Pointer encodings (DW_EH_PE_*).
inline constexpr uint8_t kPeOmit = 0xFF;
inline constexpr uint8_t kPeFormat = 0x0F;
inline constexpr uint8_t kPeApplication = 0x70;
inline constexpr uint8_t kPeIndirect = 0x80;
inline constexpr uint8_t kPeAbsPtr = 0x00, kPeUleb = 0x01, kPeUdata2 = 0x02, kPeUdata4 = 0x03,
                         kPeUdata8 = 0x04, kPeSleb = 0x09, kPeSdata2 = 0x0A, kPeSdata4 = 0x0B,
                         kPeSdata8 = 0x0C;
inline constexpr uint8_t kPeAbs = 0x00, kPePcrel = 0x10, kPeDatarel = 0x30;

// A cursor over checked memory: a read past the end sets `ok` false and returns 0.
struct Cursor {
    uint64_t pos;
    uint64_t end;
    bool ok = true;

    template <typename T> T fixed() {
        if (!ok || pos > end || end - pos < sizeof(T)) return fail<T>();
        T v;
        std::memcpy(&v, reinterpret_cast<const void*>(pos), sizeof v);
        pos += sizeof v;
        return v;
    }
    uint64_t uleb() {
        uint64_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            uint8_t b = fixed<uint8_t>();
            if (!ok || shift > 63) return fail<uint64_t>();
            v |= static_cast<uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
    }
    int64_t sleb() {
        uint64_t v = 0;
        unsigned shift = 0;
        uint8_t b;
        do {
            b = fixed<uint8_t>();
            if (!ok || shift > 63) return fail<int64_t>();
            v |= static_cast<uint64_t>(b & 0x7F) << shift;
            shift += 7;
        } while (b & 0x80);
        if (shift < 64 && (b & 0x40)) v |= ~0ull << shift;
        return static_cast<int64_t>(v);
    }
    // An encoded pointer. `data_base` serves datarel (the search table's header).
    uint64_t pointer(uint8_t encoding, uint64_t data_base = 0) {
        if (encoding == kPeOmit) return fail<uint64_t>();
        const uint64_t field = pos;
        uint64_t v = 0;
        switch (encoding & kPeFormat) {
        case kPeAbsPtr:
            v = fixed<uint64_t>();
            break;
        case kPeUleb:
            v = uleb();
            break;
        case kPeUdata2:
            v = fixed<uint16_t>();
            break;
        case kPeUdata4:
            v = fixed<uint32_t>();
            break;
        case kPeUdata8:
            v = fixed<uint64_t>();
            break;
        case kPeSleb:
            v = static_cast<uint64_t>(sleb());
            break;
        case kPeSdata2:
            v = static_cast<uint64_t>(static_cast<int64_t>(fixed<int16_t>()));
            break;
        case kPeSdata4:
            v = static_cast<uint64_t>(static_cast<int64_t>(fixed<int32_t>()));
            break;
        case kPeSdata8:
            v = fixed<uint64_t>();
            break;
        default:
            return fail<uint64_t>();
        }
        switch (encoding & kPeApplication) {
        case kPeAbs:
            break;
        case kPePcrel:
            v += field;
            break;
        case kPeDatarel:
            v += data_base;
            break;
        default:
            return fail<uint64_t>(); // textrel, funcrel, aligned: not in x86-64 tables
        }
        return v; // where kPeIndirect is set, the address of the value (personality routines)
    }
    void skip(uint64_t n) {
        if (!ok || pos > end || end - pos < n)
            ok = false;
        else
            pos += n;
    }
    template <typename T> T fail() {
        ok = false;
        return T{};
    }
};

} // namespace gpuleak::unwind
