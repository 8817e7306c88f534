#include "session/config.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "gpuleak/common/parse.h"
#include "support/log.h"

namespace gpuleak {
namespace {

Config g_config;
constexpr uint64_t kMinMaxBytes = 4096;
// A value that does not parse is reported by the first load only (a forked child loads again).
bool g_reported = false;

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

template <typename... Args> void complain(std::string_view format, const Args&... args) {
    if (!g_reported) log::warn(format, args...);
}

bool env_flag(const char* name, bool fallback) {
    const char* v = env(name);
    if (!v) return fallback;
    if (std::optional<bool> b = common::parse_bool(v)) return *b;
    complain("{}={}: not a boolean (1/0, true/false, yes/no, on/off); using {}", name, v,
             fallback ? 1 : 0);
    return fallback;
}

// A count within [lo, hi]; out-of-range values are clamped, with a warning.
unsigned env_count(const char* name, unsigned fallback, unsigned lo, unsigned hi) {
    const char* v = env(name);
    if (!v) return fallback;
    std::optional<uint64_t> n = common::parse_unsigned(v);
    if (!n) {
        complain("{}={}: not a whole number; using {}", name, v, fallback);
        return fallback;
    }
    if (*n < lo || *n > hi) {
        unsigned clamped = *n < lo ? lo : hi;
        complain("{}={}: out of range {}..{}; using {}", name, v, lo, hi, clamped);
        return clamped;
    }
    return static_cast<unsigned>(*n);
}

uint64_t env_size(const char* name, uint64_t fallback) {
    const char* v = env(name);
    if (!v) return fallback;
    if (std::optional<uint64_t> n = common::parse_size(v)) return *n;
    complain("{}={}: not a size (e.g. {}); ignored", name, v, common::kSizeExamples);
    return fallback;
}

// One of two named choices: true for `usual` (also when unset), false for `other`; anything else
// is the usual one, with a warning.
bool env_choice(const char* name, const char* usual, const char* other) {
    const char* v = env(name);
    if (!v || std::strcmp(v, usual) == 0) return true;
    if (std::strcmp(v, other) == 0) return false;
    complain("{}={}: not one of {}, {}; using {}", name, v, usual, other, usual);
    return true;
}

} // namespace

const Config& config() {
    return g_config;
}

void load_config() {
    const char* out = env("GPULEAK_OUTPUT");
    std::snprintf(g_config.output_pattern, sizeof g_config.output_pattern, "%s",
                  out ? out : "gpuleak.%p.bin");
    g_config.disable = env_flag("GPULEAK_DISABLE", false);
    g_config.stack_depth = env_count("GPULEAK_STACK_DEPTH", 256, 1, 4096);
    g_config.flush_ms = env_count("GPULEAK_FLUSH_MS", 50, 1, 10000);
    g_config.python = env_flag("GPULEAK_PYTHON", true);
    g_config.compress = env_flag("GPULEAK_COMPRESS", true);
    // Below a few KiB not even the process record fits; the cap still ends the trace cleanly.
    uint64_t max_bytes = env_size("GPULEAK_MAX_BYTES", 0);
    if (max_bytes && max_bytes < kMinMaxBytes) {
        complain("GPULEAK_MAX_BYTES={}: below the minimum; using {} bytes",
                 env("GPULEAK_MAX_BYTES"), kMinMaxBytes);
        max_bytes = kMinMaxBytes;
    }
    g_config.max_bytes = max_bytes;
    g_config.signals = env_flag("GPULEAK_SIGNALS", true);
    g_config.fast_unwind = env_choice("GPULEAK_UNWIND", "fast", "libunwind");
    g_config.tsc_clock = env_choice("GPULEAK_CLOCK", "auto", "monotonic");
    g_config.test_write_delay_ms = env_count("GPULEAK_TEST_WRITE_DELAY_MS", 0, 0, 9999);
    g_config.test_unwind_verify = env_flag("GPULEAK_TEST_UNWIND_VERIFY", false);
    g_config.test_thread_exit_delay_ms = env_count("GPULEAK_TEST_THREAD_EXIT_DELAY_MS", 0, 0, 9999);
    g_reported = true;
}

bool keep_deepbind() {
    // -1: not read yet. Read on the first dlopen with RTLD_DEEPBIND, from any thread, possibly
    // before tracing starts; whoever settles the value reports a bad one, once.
    static std::atomic<int> keep{-1};
    int k = keep.load(std::memory_order_acquire);
    if (k >= 0) return k == 1;
    const char* v = env("GPULEAK_KEEP_DEEPBIND");
    std::optional<bool> b = v ? common::parse_bool(v) : std::optional<bool>(false);
    int expected = -1;
    if (keep.compare_exchange_strong(expected, b.value_or(false) ? 1 : 0) && !b)
        log::warn("GPULEAK_KEEP_DEEPBIND={}: not a boolean (1/0, true/false, yes/no, on/off); "
                  "using 0",
                  v);
    return keep.load(std::memory_order_acquire) == 1;
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
