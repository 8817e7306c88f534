#include "object_read.h"

#include "frame_walk.h"

namespace gpuleak::python {
namespace {

constexpr std::string_view kUnknown = "<?>";
// A line table this large is not a real function's; the bound keeps a bad read from running off.
constexpr int64_t kMaxTableBytes = 16 << 20;

// Appends one code point; false (and nothing written) if it does not fit.
bool put_utf8(uint32_t cp, char* buf, size_t cap, size_t& len) {
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    char tmp[4];
    size_t n;
    if (cp < 0x80) {
        tmp[0] = static_cast<char>(cp);
        n = 1;
    } else if (cp < 0x800) {
        tmp[0] = static_cast<char>(0xc0 | (cp >> 6));
        tmp[1] = static_cast<char>(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        tmp[0] = static_cast<char>(0xe0 | (cp >> 12));
        tmp[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        tmp[2] = static_cast<char>(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        if (cp > 0x10ffff) cp = 0xfffd;
        tmp[0] = static_cast<char>(0xf0 | (cp >> 18));
        tmp[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        tmp[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        tmp[3] = static_cast<char>(0x80 | (cp & 0x3f));
        n = 4;
    }
    if (len + n > cap) return false;
    for (size_t i = 0; i < n; ++i)
        buf[len + i] = tmp[i];
    len += n;
    return true;
}

} // namespace

std::string_view read_str(const Layout& l, uintptr_t str_type, uintptr_t obj, char* buf,
                          size_t cap) {
    if (!has_type(l, obj, str_type)) return kUnknown;
    uint32_t state = load<uint32_t>(obj, l.str_state) >> l.str_state_shift;
    uint32_t kind = (state >> 2) & 7;
    bool compact = (state >> 5) & 1;
    bool ascii = (state >> 6) & 1;
    if (!compact || (kind != 1 && kind != 2 && kind != 4)) return kUnknown;
    int64_t length = load<int64_t>(obj, l.str_length);
    if (length < 0) return kUnknown;
    uintptr_t data = obj + (ascii ? l.str_ascii_size : l.str_compact_size);
    size_t len = 0;
    for (int64_t i = 0; i < length; ++i) {
        uint32_t cp;
        if (kind == 1) {
            cp = load<uint8_t>(data, static_cast<uint32_t>(i));
        } else if (kind == 2) {
            cp = load<uint16_t>(data, static_cast<uint32_t>(2 * i));
        } else {
            cp = load<uint32_t>(data, static_cast<uint32_t>(4 * i));
        }
        if (!put_utf8(cp, buf, cap, len)) break;
    }
    return {buf, len};
}

std::span<const uint8_t> read_bytes(const Layout& l, uintptr_t bytes_type, uintptr_t obj) {
    if (!has_type(l, obj, bytes_type)) return {};
    int64_t size = load<int64_t>(obj, l.var_size);
    if (size <= 0 || size > kMaxTableBytes) return {};
    return {reinterpret_cast<const uint8_t*>(obj + l.bytes_sval), static_cast<size_t>(size)};
}

} // namespace gpuleak::python
