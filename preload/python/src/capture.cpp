// capture(): the hook-time entry point tying detection, the walk and the code registry together.
#include <algorithm>

#include "code_registry.h"
#include "fingerprint.h"
#include "frame_walk.h"
#include "object_read.h"
#include "python_stack.h"
#include "runtime.h"
#include "spin_lock.h"
#include "warnings.h"

namespace gpuleak::python {
namespace {

constinit SpinLock g_lock;
constinit CodeRegistry g_registry;

// New code objects are collected under the lock and reported after releasing it, because the
// sink writes to the trace and may block.
constexpr size_t kBatch = 32;

struct Fresh {
    uintptr_t code;
    uint64_t id;
};

void report(const Runtime& rt, const Fresh& fresh, CodeSink sink, void* ctx) {
    const Layout& l = rt.layout;
    char filename[kMaxNameBytes];
    char qualname[kMaxNameBytes];
    CodeInfo info;
    info.code_id = fresh.id;
    info.filename = read_str(l, rt.str_type, load<uintptr_t>(fresh.code, l.co_filename), filename,
                             sizeof filename);
    info.qualname = read_str(l, rt.str_type, load<uintptr_t>(fresh.code, l.co_qualname), qualname,
                             sizeof qualname);
    info.firstlineno = load<int32_t>(fresh.code, l.co_firstlineno);
    info.linetable = read_bytes(l, rt.bytes_type, load<uintptr_t>(fresh.code, l.co_linetable));
    sink(ctx, info);
}

// Swaps each frame's code address for its registry id. The code objects stay alive meanwhile:
// the frames on this thread's stack reference them.
bool assign_ids(const Runtime& rt, PyFrame* frames, size_t n, CodeSink sink, void* ctx) {
    Fresh fresh[kBatch];
    bool ok = true;
    for (size_t i = 0; ok && i < n;) {
        size_t count = 0;
        g_lock.lock();
        for (; i < n && count < kBatch; ++i) {
            auto code = static_cast<uintptr_t>(frames[i].code_id);
            bool is_new = false;
            uint64_t id = g_registry.resolve(fingerprint(rt.layout, code), is_new);
            if (!id) {
                ok = false;
                break;
            }
            frames[i].code_id = id;
            if (is_new) fresh[count++] = Fresh{code, id};
        }
        g_lock.unlock();
        if (sink) {
            for (size_t k = 0; k < count; ++k)
                report(rt, fresh[k], sink, ctx);
        }
    }
    return ok;
}

bool in_main_interpreter(const Layout& l, uintptr_t tstate) {
    uintptr_t interp = load<uintptr_t>(tstate, l.ts_interp);
    return interp && load<int64_t>(interp, l.interp_id) == 0;
}

} // namespace

size_t capture(PyFrame* out, size_t max, CodeSink sink, void* ctx) {
    const Runtime* rt = runtime();
    if (!rt || !out || max == 0) return 0;
    // Finalization clears the "initialized" flag right after setting "finalizing": test the
    // latter first so the warning says why stacks stopped.
    if (rt->is_finalizing()) {
        warn_once(Warning::Finalizing,
                  "Python is finalizing: later allocations are recorded without Python stacks");
        return 0;
    }
    if (!rt->is_initialized()) return 0;
    // The thread's own state even while the GIL is released (as around every ctypes or PyTorch
    // call); the "current" thread state is NULL then.
    auto tstate = reinterpret_cast<uintptr_t>(rt->this_thread_state());
    if (!tstate) return 0;
    if (!in_main_interpreter(rt->layout, tstate)) {
        // Subinterpreters are out of scope. 3.12+ rebind the gilstate slot whenever a thread
        // switches interpreters, so this also covers a thread inside run_string(); up to 3.11
        // the slot keeps the thread's first (main-interpreter) state, whose frames we then report.
        warn_once(Warning::Subinterpreter,
                  "allocations from subinterpreter threads are recorded without Python stacks");
        return 0;
    }
    size_t n = walk_frames(rt->layout, rt->code_type, tstate, out, std::min(max, kMaxFrames));
    if (n && !assign_ids(*rt, out, n, sink, ctx)) {
        warn_once(Warning::OutOfMemory, "out of memory for the Python code registry");
        return 0;
    }
    return n;
}

void reset_after_fork() {
    g_lock.reset();
    g_registry.clear();
    reset_detection_after_fork();
}

} // namespace gpuleak::python
