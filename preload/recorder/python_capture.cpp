#include "recorder/python_capture.h"

#include <atomic>
#include <cstring>
#include <utility>

#include "gpuleak/format/encoder.h"
#include "hooks/real_symbols.h"
#include "recorder/global_stream.h"
#include "recorder/thread_writer.h"
#include "session/config.h"
#include "support/log.h"
#include "support/pages.h"

#ifdef GPULEAK_WITH_PYTHON
#include "python_stack.h"
#endif

namespace gpuleak::python_capture {

#ifdef GPULEAK_WITH_PYTHON
namespace {

constexpr size_t kMaxPyFrames = 512;
constexpr size_t kMaxRecord = 1 + 6 * format::kMaxVarintBytes;
std::atomic<bool> g_info_written{false};

void write_code(void* ctx, const python::CodeInfo& code) {
    auto* ts = static_cast<ThreadState*>(ctx);
    size_t table = code.linetable.size();
    size_t need = kMaxRecord + code.filename.size() + code.qualname.size() + table;
    if (need > kChunkPayload / 2) table = 0; // a giant line table costs us lines, not the trace
    need = kMaxRecord + code.filename.size() + code.qualname.size() + table;
    if (!recorder::reserve(ts, need)) return;
    format::Encoder e = recorder::encoder(ts);
    format::put::py_code(e, code.code_id, code.filename, code.qualname, code.firstlineno,
                         code.linetable.data(), table);
    recorder::commit(ts, e);
}

void write_info() {
    // Read first: an exchange on every capture is a locked instruction on every allocation.
    if (g_info_written.load(std::memory_order_relaxed)) return;
    const python::Info* info = python::info();
    if (!info || g_info_written.exchange(true)) return;
    global_stream::write(kMaxRecord, [&](format::Encoder& e) {
        format::put::py_info(e, info->version_hex,
                             info->layout_source && info->layout_source[0] == 'd' ? 1 : 0);
    });
}

// Out of line: its prologue (the registers a stack walk needs saved) would otherwise be paid by
// every allocation of a process without Python, which capture() turns away first.
__attribute__((noinline)) uint64_t capture_stack(ThreadState* ts) {
    if (!ts->py_frames) {
        // Two frame buffers (this capture's, the previous one's), the previous stack's keys and
        // nodes (outermost first), the code-id cache.
        constexpr size_t kFrameBuffer = kMaxPyFrames * sizeof(python::PyFrame);
        size_t frames_bytes = 2 * kFrameBuffer + kMaxPyFrames * 2 * sizeof(uint64_t);
        void* mem = map_pages(frames_bytes + sizeof(python::CodeCache));
        if (!mem) return 0;
        ts->py_prev_frames = static_cast<char*>(mem) + kFrameBuffer;
        ts->py_prev_keys = reinterpret_cast<uint64_t*>(static_cast<char*>(mem) + 2 * kFrameBuffer);
        ts->py_prev_nodes = ts->py_prev_keys + kMaxPyFrames;
        ts->py_code_cache =
            reinterpret_cast<python::CodeCache*>(static_cast<char*>(mem) + frames_bytes);
        ts->py_prev_depth = 0;
        ts->py_frames = mem;
    }
    auto* frames = static_cast<python::PyFrame*>(ts->py_frames);
    size_t n = python::capture(frames, kMaxPyFrames, &write_code, ts, ts->py_code_cache);
    if (!n) return 0;
    write_info();
    // A loop allocates from the same Python stack again and again: the same frames (code ids,
    // offsets, entries) as the previous capture's are the same trie path, whose leaf is known.
    if (n == ts->py_prev_depth &&
        std::memcmp(frames, ts->py_prev_frames, n * sizeof(python::PyFrame)) == 0)
        return ts->py_prev_nodes[n - 1];
    // As for native stacks: the outer frames are usually those of the previous allocation, so only
    // the differing inner ones are looked up in the trie.
    size_t depth = 0; // from the outermost frame
    bool same = true;
    uint64_t node = 0;
    // Locals: the stores below could otherwise alias these fields, reloaded on every frame.
    uint64_t* const prev_keys = ts->py_prev_keys;
    uint64_t* const prev_nodes = ts->py_prev_nodes;
    const size_t prev_depth = ts->py_prev_depth;
    for (size_t i = n; i-- > 0; ++depth) {
        const python::PyFrame& f = frames[i];
        uint64_t key = (f.code_id << 33) |
                       (static_cast<uint64_t>(static_cast<uint32_t>(f.byte_offset)) << 1) |
                       (f.is_entry ? 1 : 0);
        if (same && depth < prev_depth && prev_keys[depth] == key) {
            node = prev_nodes[depth];
            continue;
        }
        same = false;
        bool created = false;
        uint64_t child = ts->python.intern(node, key, created);
        if (!child) {
            ts->py_prev_depth = 0;
            return node;
        }
        if (created) {
            if (!recorder::reserve(ts, kMaxRecord)) {
                ts->py_prev_depth = 0;
                return 0;
            }
            format::Encoder e = recorder::encoder(ts);
            format::put::py_stack_node(e, child, node, f.code_id, f.byte_offset, f.is_entry);
            recorder::commit(ts, e);
        }
        node = child;
        prev_keys[depth] = key;
        prev_nodes[depth] = node;
    }
    ts->py_prev_depth = static_cast<unsigned>(n);
    std::swap(ts->py_frames, ts->py_prev_frames); // the next capture fills the other buffer
    return node;
}

} // namespace

uint64_t capture(ThreadState* ts) {
    // Most allocations of a process without Python end here, before the frame buffers.
    if (!config().python || !python::available()) return 0;
    return capture_stack(ts);
}

void modules_changed() {
    python::notify_modules_changed();
}

void init() {
    python::set_real_dlsym(hooks::real_dlsym());
    python::set_warning_sink([](const char* message) { log::warn("{}", message); });
}

void reset_after_fork_child() {
    python::reset_after_fork();
    g_info_written.store(false);
}

#else

uint64_t capture(ThreadState*) {
    return 0;
}
void modules_changed() {}
void init() {}
void reset_after_fork_child() {}

#endif

} // namespace gpuleak::python_capture
