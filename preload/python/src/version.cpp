#include "version.h"

namespace gpuleak::python {
namespace {

bool number(const char*& p, uint32_t& out, uint32_t limit) {
    if (*p < '0' || *p > '9') return false;
    uint32_t v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + static_cast<uint32_t>(*p++ - '0');
        if (v > limit) return false;
    }
    out = v;
    return true;
}

} // namespace

uint32_t parse_version(const char* text) {
    if (!text) return 0;
    const char* p = text;
    uint32_t major = 0, minor = 0, micro = 0;
    if (!number(p, major, 255) || *p++ != '.' || !number(p, minor, 255)) return 0;
    if (*p == '.') {
        ++p;
        if (!number(p, micro, 255)) return 0;
    }
    uint32_t level = 0xf, serial = 0;
    if (*p == 'a' || *p == 'b' || (p[0] == 'r' && p[1] == 'c')) {
        level = *p == 'a' ? 0xa : *p == 'b' ? 0xb : 0xc;
        p += level == 0xc ? 2 : 1;
        if (!number(p, serial, 15)) return 0;
    }
    return (major << 24) | (minor << 16) | (micro << 8) | (level << 4) | serial;
}

} // namespace gpuleak::python
