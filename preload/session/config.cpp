#include "session/config.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpuleak {
namespace {

Config g_config;
constexpr uint64_t kMinMaxBytes = 4096;

uint64_t env_number(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (end == v) return fallback;
    switch (*end) { // accept 10M / 2G style sizes
    case 'k':
    case 'K':
        n <<= 10;
        break;
    case 'm':
    case 'M':
        n <<= 20;
        break;
    case 'g':
    case 'G':
        n <<= 30;
        break;
    default:
        break;
    }
    return n;
}

bool env_flag(const char* name, bool fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    return !(v[0] == '0' || !std::strcmp(v, "off") || !std::strcmp(v, "false") ||
             !std::strcmp(v, "no"));
}

} // namespace

const Config& config() {
    return g_config;
}

void load_config() {
    const char* out = std::getenv("GPULEAK_OUTPUT");
    std::snprintf(g_config.output_pattern, sizeof g_config.output_pattern, "%s",
                  out && *out ? out : "gpuleak.%p.bin");
    uint64_t depth = env_number("GPULEAK_STACK_DEPTH", 256);
    g_config.stack_depth = static_cast<unsigned>(depth < 1 ? 1 : depth > 4096 ? 4096 : depth);
    uint64_t flush = env_number("GPULEAK_FLUSH_MS", 50);
    g_config.flush_ms = static_cast<unsigned>(flush < 1 ? 1 : flush > 10000 ? 10000 : flush);
    g_config.python = env_flag("GPULEAK_PYTHON", true);
    g_config.compress = env_flag("GPULEAK_COMPRESS", true);
    g_config.clear_deepbind = !env_flag("GPULEAK_KEEP_DEEPBIND", false);
    // Below a few KiB not even the process record fits; the cap still ends the trace cleanly.
    uint64_t max_bytes = env_number("GPULEAK_MAX_BYTES", 0);
    g_config.max_bytes = max_bytes && max_bytes < kMinMaxBytes ? kMinMaxBytes : max_bytes;
    g_config.signals = env_flag("GPULEAK_SIGNALS", true);
    g_config.test_write_delay_ms =
        static_cast<unsigned>(env_number("GPULEAK_TEST_WRITE_DELAY_MS", 0) % 10000);
}

void expand_output_path(const char* pattern, int pid, bool forked_child, char* out, size_t size) {
    size_t n = 0;
    bool has_pid = false;
    auto put = [&](const char* s) {
        while (*s && n + 1 < size)
            out[n++] = *s++;
    };
    for (const char* p = pattern; *p; ++p) {
        if (*p != '%' || !p[1]) {
            if (n + 1 < size) out[n++] = *p;
            continue;
        }
        char buf[32];
        switch (*++p) {
        case 'p':
            std::snprintf(buf, sizeof buf, "%d", pid);
            put(buf);
            has_pid = true;
            break;
        case 'r': {
            const char* rank = std::getenv("RANK");
            if (!rank || !*rank) rank = std::getenv("LOCAL_RANK");
            put(rank && *rank ? rank : "0");
            break;
        }
        case '%':
            put("%");
            break;
        default:
            put("%");
            buf[0] = *p;
            buf[1] = 0;
            put(buf);
        }
    }
    out[n] = 0;
    if (forked_child && !has_pid) {
        char buf[32];
        std::snprintf(buf, sizeof buf, ".%d", pid);
        put(buf);
        out[n] = 0;
    }
}

} // namespace gpuleak
