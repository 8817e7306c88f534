#include "runtime.h"

#include <atomic>
#include <cstdio>

#include <dlfcn.h>

#include "frame_walk.h"
#include "python_stack.h"
#include "version.h"
#include "version_tables.h"
#include "warnings.h"

namespace gpuleak::python {
namespace {

enum State : int { kUnknown, kReady, kUnsupported };

// A failed lookup walks every loaded object's symbol table: cheap, but not per allocation.
constexpr uint32_t kRetryEvery = 4096;

std::atomic<void* (*)(void*, const char*)> g_dlsym{nullptr};
std::atomic<int> g_state{kUnknown};
std::atomic<bool> g_detecting{false};
std::atomic<uint32_t> g_generation{0};
std::atomic<uint32_t> g_tried_generation{0};
std::atomic<uint32_t> g_calls{0};
Runtime g_runtime;
Info g_info;

template <typename T> T symbol(void* (*real_dlsym)(void*, const char*), const char* name) {
    return reinterpret_cast<T>(real_dlsym(RTLD_DEFAULT, name));
}

uint32_t running_version(void* (*real_dlsym)(void*, const char*)) {
    if (auto* v = symbol<const unsigned long*>(real_dlsym, "Py_Version")) {
        return static_cast<uint32_t>(*v);
    }
    if (auto get = symbol<const char* (*)()>(real_dlsym, "Py_GetVersion")) {
        return parse_version(get());
    }
    return 0;
}

uint64_t basicsize(const Layout& l, uintptr_t type) {
    return static_cast<uint64_t>(load<int64_t>(type, l.type_basicsize));
}

// Catches a layout that does not match this build (Py_TRACE_REFS, a vendor patch...) before the
// first walk dereferences anything.
const char* check_type_sizes(const Layout& l, uintptr_t code_type, uintptr_t frame_type) {
    if (basicsize(l, code_type) != l.expect_code_basicsize) {
        return "PyCode_Type.tp_basicsize differs from the expected code object layout";
    }
    if (l.expect_frame_basicsize &&
        (!frame_type || basicsize(l, frame_type) != l.expect_frame_basicsize)) {
        return "PyFrame_Type.tp_basicsize differs from the expected frame layout";
    }
    return nullptr;
}

// Leaves g_state at kUnknown when there is no Python yet, so a later call looks again.
void detect() {
    auto real_dlsym = g_dlsym.load(std::memory_order_acquire);
    if (!real_dlsym) return;
    auto this_thread_state = symbol<void* (*)()>(real_dlsym, "PyGILState_GetThisThreadState");
    if (!this_thread_state) return;

    Runtime rt{};
    rt.this_thread_state = this_thread_state;
    rt.is_initialized = symbol<int (*)()>(real_dlsym, "Py_IsInitialized");
    rt.is_finalizing = symbol<int (*)()>(real_dlsym, "Py_IsFinalizing");
    if (!rt.is_finalizing) rt.is_finalizing = symbol<int (*)()>(real_dlsym, "_Py_IsFinalizing");
    rt.code_type = symbol<uintptr_t>(real_dlsym, "PyCode_Type");
    rt.str_type = symbol<uintptr_t>(real_dlsym, "PyUnicode_Type");
    rt.bytes_type = symbol<uintptr_t>(real_dlsym, "PyBytes_Type");
    auto frame_type = symbol<uintptr_t>(real_dlsym, "PyFrame_Type");
    uint32_t version = running_version(real_dlsym);
    uint32_t minor = (version >> 16) & 0xff;

    const char* why = nullptr;
    if (!rt.is_initialized || !rt.is_finalizing || !rt.code_type || !rt.str_type ||
        !rt.bytes_type || !version) {
        why = "a required CPython symbol is missing";
    } else if ((version & 0xf0) != 0xf0) {
        // Struct layouts move between pre-releases; only final releases have a known layout.
        why = "pre-release interpreters are not supported";
    } else if ((version >> 24) != 3 || minor < 9 || minor > 14) {
        why = "only CPython 3.9 to 3.14 are supported";
    } else if (minor <= 12) {
        if (!table_layout(version, rt.layout)) why = "no layout table for this version";
    } else {
        debug_offsets_layout(symbol<const void*>(real_dlsym, "_PyRuntime"), version, rt.layout,
                             &why);
    }
    if (!why) why = check_type_sizes(rt.layout, rt.code_type, frame_type);

    g_info.version_hex = version;
    if (why) {
        g_info.layout_source = "unsupported";
        g_state.store(kUnsupported, std::memory_order_release);
        char message[256];
        std::snprintf(message, sizeof message,
                      "Python %u.%u.%u (0x%08x) found but Python stacks are disabled: %s",
                      version >> 24, minor, (version >> 8) & 0xff, version, why);
        warn_once(Warning::Unsupported, message);
        return;
    }
    g_info.layout_source = rt.layout.source;
    g_runtime = rt;
    g_state.store(kReady, std::memory_order_release);
}

} // namespace

const Runtime* runtime() {
    int state = g_state.load(std::memory_order_acquire);
    if (state == kReady) return &g_runtime;
    if (state == kUnsupported) return nullptr;
    uint32_t generation = g_generation.load(std::memory_order_relaxed);
    // Counted with a plain load and store, not fetch_add: this runs on every allocation of a
    // process without Python, and a locked add on one global line is what every thread would
    // meet on. Racing threads may lose counts; the retry then comes a little later.
    uint32_t calls = g_calls.load(std::memory_order_relaxed);
    g_calls.store(calls + 1, std::memory_order_relaxed);
    bool due = generation != g_tried_generation.load(std::memory_order_relaxed) ||
               calls % kRetryEvery == 0;
    if (!due || g_detecting.exchange(true, std::memory_order_acquire)) return nullptr;
    g_tried_generation.store(generation, std::memory_order_relaxed);
    if (g_state.load(std::memory_order_acquire) == kUnknown) detect();
    g_detecting.store(false, std::memory_order_release);
    return g_state.load(std::memory_order_acquire) == kReady ? &g_runtime : nullptr;
}

bool available() {
    return runtime() != nullptr;
}

const Info* info() {
    return g_state.load(std::memory_order_acquire) == kUnknown ? nullptr : &g_info;
}

void set_real_dlsym(void* (*real_dlsym)(void*, const char*)) {
    g_dlsym.store(real_dlsym, std::memory_order_release);
    g_generation.fetch_add(1, std::memory_order_relaxed);
}

void notify_modules_changed() {
    g_generation.fetch_add(1, std::memory_order_relaxed);
}

void reset_detection_after_fork() {
    g_detecting.store(false, std::memory_order_relaxed);
}

} // namespace gpuleak::python
