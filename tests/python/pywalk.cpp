// A ctypes-callable probe around gpuleak::python::capture: ctypes releases the GIL around the
// call, exactly like a PyTorch op reaching cudaMalloc. Lines are decoded in-process with the
// analyzer's decoders from the CodeInfo records the sink received, so the whole capture -> record
// -> decode path is what the driver compares with traceback.extract_stack().
#include <dlfcn.h>
#include <execinfo.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "python/line_table.h"
#include "python/merge.h"
#include "python_stack.h"

namespace {

namespace py = gpuleak::python;
namespace pd = gpuleak::pydecode;

struct Code {
    std::string filename, qualname;
    int firstlineno = 0;
    std::vector<uint8_t> table;
};

std::mutex g_mutex;
std::condition_variable g_code_arrived;
std::unordered_map<uint64_t, Code> g_codes;
std::string g_warnings;

// PYWALK_SINK_DELAY_MS: the sink sleeps before storing a new code object, widening the window in
// which another thread already holds its id (the race the threads scenario must survive).
const int g_sink_delay_ms = [] {
    const char* v = std::getenv("PYWALK_SINK_DELAY_MS");
    return v ? std::atoi(v) : 0;
}();

// What the last capture on this thread looked like next to its native stack.
thread_local int t_native_evals = -1;
thread_local int t_entries = -1;
thread_local bool t_aligned = false;

void on_warning(const char* message) {
    std::lock_guard lock(g_mutex);
    g_warnings += message;
    g_warnings += '\n';
}

void on_code(void*, const py::CodeInfo& info) {
    Code code{std::string(info.filename), std::string(info.qualname), info.firstlineno,
              std::vector<uint8_t>(info.linetable.begin(), info.linetable.end())};
    if (g_sink_delay_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(g_sink_delay_ms));
    {
        std::lock_guard lock(g_mutex);
        g_codes[info.code_id] = std::move(code);
    }
    g_code_arrived.notify_all();
}

void no_code(void*, const py::CodeInfo&) {}

struct Setup {
    Setup() {
        py::set_real_dlsym(&dlsym);
        py::set_warning_sink(&on_warning);
    }
} g_setup;

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
}

int emit(const std::string& json, char* buf, size_t n) {
    if (json.size() + 1 > n) return -1;
    json.copy(buf, json.size());
    buf[json.size()] = '\0';
    return static_cast<int>(json.size());
}

// Counts the native eval-loop frames around this capture and checks merge() lines them up.
void check_native(const py::PyFrame* frames, size_t count) {
    static thread_local void* ips[8192]; // 200 recursive Python calls are ~1,000 C frames
    int depth = backtrace(ips, 8192);
    std::vector<std::string> names(static_cast<size_t>(depth));
    std::vector<pd::NativeFrameName> native;
    for (int i = 0; i < depth; ++i) {
        Dl_info dl{};
        if (dladdr(ips[i], &dl) && dl.dli_sname) names[static_cast<size_t>(i)] = dl.dli_sname;
    }
    int evals = 0;
    for (int i = 0; i < depth; ++i) {
        native.push_back({names[static_cast<size_t>(i)], static_cast<uint64_t>(i)});
        if (pd::is_eval_frame(names[static_cast<size_t>(i)])) ++evals;
    }
    std::vector<pd::PyFrameView> pyv;
    int entries = 0;
    for (size_t i = 0; i < count; ++i) {
        pyv.push_back({frames[i].code_id, frames[i].byte_offset, frames[i].is_entry});
        entries += frames[i].is_entry;
    }
    bool aligned = false;
    auto merged = pd::merge(native, pyv, &aligned);
    // Aligned merges must keep every Python frame, in order.
    size_t next = 0;
    for (const auto& m : merged) {
        if (m.kind == pd::MergedFrame::Kind::Python && m.position == next) ++next;
    }
    t_native_evals = evals;
    t_entries = entries;
    t_aligned = aligned && next == count;
}

std::string frames_json(const py::PyFrame* frames, size_t count) {
    const py::Info* info = py::info();
    std::string json = "[";
    std::unique_lock lock(g_mutex);
    // capture() publishes a new code object's id in its registry before the thread that found it
    // has run the sink (the sink runs outside the registry's lock), so another thread can return
    // the id first. The trace reader sees every definition before any event; wait for them the
    // same way, bounded, so a definition that never comes still fails the comparison.
    g_code_arrived.wait_for(lock, std::chrono::seconds(10), [&] {
        for (size_t i = 0; i < count; ++i)
            if (!g_codes.count(frames[i].code_id)) return false;
        return true;
    });
    for (size_t i = 0; i < count; ++i) {
        auto it = g_codes.find(frames[i].code_id);
        if (i) json += ',';
        json += "{\"file\":";
        if (it == g_codes.end()) {
            json += "null,\"function\":null,\"line\":null";
        } else {
            const Code& c = it->second;
            append_json_string(json, c.filename);
            json += ",\"function\":";
            append_json_string(json, c.qualname);
            json += ",\"line\":";
            json += std::to_string(pd::line_for_offset(info->version_hex, c.table, c.firstlineno,
                                                       frames[i].byte_offset));
        }
        json += ",\"offset\":" + std::to_string(frames[i].byte_offset);
        json += ",\"entry\":";
        json += frames[i].is_entry ? "true" : "false";
        json += "}";
    }
    json += "]";
    return json;
}

// CPU time of this thread: the benchmark shares its machine, and preemption is not our cost.
double now_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

} // namespace

extern "C" {

// The caller's Python stack as [{"file","function","line","offset","entry"}...], innermost
// first. Returns the JSON length, or -1 if `n` is too small.
__attribute__((visibility("default"))) int pywalk_capture_json(char* buf, size_t n) {
    static thread_local py::PyFrame frames[py::kMaxFrames];
    // A per-thread code cache, as the preload keeps one: the scenarios (address_reuse above all)
    // then check its hits as well as the registry.
    static thread_local py::CodeCache cache{};
    size_t count = py::capture(frames, py::kMaxFrames, &on_code, nullptr, &cache);
    check_native(frames, count);
    return emit(frames_json(frames, count), buf, n);
}

// The same, captured on a fresh C++ thread that has no Python thread state.
__attribute__((visibility("default"))) int pywalk_capture_json_cxx_thread(char* buf, size_t n) {
    int rc = -1;
    std::thread([&] { rc = pywalk_capture_json(buf, n); }).join();
    return rc;
}

// {"native_evals":N,"entries":M,"aligned":bool} for the last capture on this thread.
__attribute__((visibility("default"))) int pywalk_last_native_json(char* buf, size_t n) {
    std::string json = "{\"native_evals\":" + std::to_string(t_native_evals) +
                       ",\"entries\":" + std::to_string(t_entries) +
                       ",\"aligned\":" + (t_aligned ? "true" : "false") + "}";
    return emit(json, buf, n);
}

// {"version_hex":N,"layout":"..."} or null when no interpreter was detected.
__attribute__((visibility("default"))) int pywalk_info_json(char* buf, size_t n) {
    const py::Info* info = py::info();
    if (!info) return emit("null", buf, n);
    std::string json = "{\"version_hex\":" + std::to_string(info->version_hex) + ",\"layout\":";
    append_json_string(json, info->layout_source);
    return emit(json + "}", buf, n);
}

__attribute__((visibility("default"))) int pywalk_warnings(char* buf, size_t n) {
    std::lock_guard lock(g_mutex);
    return emit(g_warnings, buf, n);
}

// Average nanoseconds per capture() of the caller's stack (registry lookups included, every
// code object already known); *frames receives the frame count.
__attribute__((visibility("default"))) double pywalk_bench_ns(int iterations, int* frames) {
    static thread_local py::PyFrame out[py::kMaxFrames];
    static thread_local py::CodeCache cache{};
    *frames = static_cast<int>(py::capture(out, py::kMaxFrames, &no_code, nullptr, &cache));
    double start = now_ns();
    for (int i = 0; i < iterations; ++i)
        py::capture(out, py::kMaxFrames, &no_code, nullptr, &cache);
    return (now_ns() - start) / iterations;
}

// The same from a thread without Python: the cost a non-Python allocation pays.
__attribute__((visibility("default"))) double pywalk_bench_cxx_thread_ns(int iterations) {
    double result = 0;
    std::thread([&] {
        int frames = 0;
        result = pywalk_bench_ns(iterations, &frames);
    }).join();
    return result;
}

} // extern "C"
