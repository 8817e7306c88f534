// capture(): the hook-time entry point tying detection, the walk and the code registry together.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "code_cache.h"
#include "code_registry.h"
#include "fingerprint.h"
#include "frame_walk.h"
#include "object_read.h"
#include "python_stack.h"
#include "runtime.h"
#include "support/spin_lock.h"
#include "warnings.h"

namespace gpuleak::python {
namespace {

constinit SpinLock g_lock;
constinit CodeRegistry g_registry;
// Bumped by reset_after_fork(): every thread's CodeCache of an older generation is stale.
constinit std::atomic<uint64_t> g_generation{1};

// Reads what the trace keeps of a code object seen for the first time and hands it to the sink.
// Called outside the lock: the sink writes to the trace and may block.
void report(const Runtime& rt, uintptr_t code, uint64_t id, CodeSink sink, void* ctx) {
    const Layout& l = rt.layout;
    char filename[kMaxNameBytes];
    char qualname[kMaxNameBytes];
    CodeInfo info;
    info.code_id = id;
    info.filename =
        read_str(l, rt.str_type, load<uintptr_t>(code, l.co_filename), filename, sizeof filename);
    info.qualname =
        read_str(l, rt.str_type, load<uintptr_t>(code, l.co_qualname), qualname, sizeof qualname);
    info.firstlineno = load<int32_t>(code, l.co_firstlineno);
    info.linetable = read_bytes(l, rt.bytes_type, load<uintptr_t>(code, l.co_linetable));
    sink(ctx, info);
}

// The code objects this capture has already identified. Within one capture an address cannot
// change hands: every code object on the walked stack is referenced by one of this thread's
// frames, which only this thread (blocked in the hook) could pop. So a code address met again
// further out (a loop calling the same helpers, a framework's wrappers around each layer) is the
// same code object, and its fingerprint (a digest of its line table up to 3.11) is checked once
// per capture, not once per frame; a run of frames of one code (recursion) takes its id without
// a lookup. Across captures nothing is assumed: the next capture checks each code again.
struct CaptureMemo {
    // Direct-mapped by the top bits of the address hash: a lookup is one comparison, so a stack
    // of all distinct codes pays little for it; two codes that share an entry only cost a check.
    static constexpr size_t kEntries = 16;
    uintptr_t code[kEntries]; // 0: empty (no code object lives there)
    uint64_t id[kEntries];

    CaptureMemo() { std::memset(code, 0, sizeof code); }

    uint64_t find(uintptr_t c, uint64_t code_hash) const {
        size_t k = code_hash >> 60;
        return code[k] == c ? id[k] : 0;
    }
    void add(uintptr_t c, uint64_t code_hash, uint64_t i) {
        size_t k = code_hash >> 60;
        code[k] = c;
        id[k] = i;
    }
};
static_assert(CaptureMemo::kEntries == 16, "find() and add() take the top 4 bits of the hash");

// What assign_ids() needs to turn code addresses into registry ids. The code objects stay alive
// meanwhile: the frames on this thread's stack reference them.
struct IdAssigner {
    const Runtime& rt;
    CodeCache* cache; // the thread's, or nullptr
    bool undigested;  // up to 3.11: the fingerprint digests the line table (no co_version)
    CodeSink sink;
    void* sink_ctx;
    CaptureMemo memo;

    IdAssigner(const Runtime& r, CodeCache* c, CodeSink s, void* ctx)
        : rt(r), cache(c), undigested(c && digests_content(r.layout)), sink(s), sink_ctx(ctx) {}
};

// The id of a code object the thread's cache did not answer for: by its fingerprint, from the
// cache (3.12+ whose co_version ran out) or the registry. Out of line: its frame is large, and it
// is rarely reached.
[[gnu::noinline]] uint64_t fingerprinted_code_id(IdAssigner& a, uintptr_t code,
                                                 CodeCache::Slot* set) {
    CodeKey key = fingerprint(a.rt.layout, code);
    uint64_t packed[6];
    pack(key, packed);
    if (set && !a.undigested) {
        if (CodeCache::Slot* hit = cache_find(set, packed)) return hit->id;
    }
    bool is_new = false;
    g_lock.lock();
    uint64_t id = g_registry.resolve(key, is_new);
    g_lock.unlock();
    if (!id) return 0;
    if (set) cache_store(a.rt.layout, set, key, packed, id);
    if (is_new && a.sink) report(a.rt, code, id, a.sink, a.sink_ctx);
    return id;
}

// Swaps each frame's code address for its registry id: codes met earlier in this capture are
// taken from the memo, those the thread's cache holds are resolved there, without the lock.
// The frames outside one that runs the same code (recursion) take its id without a lookup.
bool assign_ids(IdAssigner& a, PyFrame* frames, size_t n) {
    uintptr_t last_code = 0;
    uint64_t last_id = 0;
    for (size_t i = 0; i < n; ++i) {
        auto code = static_cast<uintptr_t>(frames[i].code_id);
        if (code != last_code) {
            last_code = code;
            uint64_t hash = code_address_hash(code);
            last_id = a.memo.find(code, hash);
            if (!last_id) {
                CodeCache::Slot* set = a.cache ? cache_set(*a.cache, hash) : nullptr;
                CodeCache::Slot* hit = !set ? nullptr
                                       : a.undigested
                                           ? cache_find_undigested(a.rt.layout, set, code)
                                           : cache_find_versioned(a.rt.layout, set, code);
                last_id = hit ? hit->id : fingerprinted_code_id(a, code, set);
                if (!last_id) return false;
                a.memo.add(code, hash, last_id);
            }
        }
        frames[i].code_id = last_id;
    }
    return true;
}

bool in_main_interpreter(const Layout& l, uintptr_t tstate) {
    uintptr_t interp = load<uintptr_t>(tstate, l.ts_interp);
    return interp && load<int64_t>(interp, l.interp_id) == 0;
}

} // namespace

size_t capture(PyFrame* out, size_t max, CodeSink sink, void* ctx, CodeCache* cache) {
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
    if (cache) {
        uint64_t generation = g_generation.load(std::memory_order_relaxed);
        if (cache->generation != generation) {
            std::memset(cache->slots, 0, sizeof cache->slots);
            cache->generation = generation;
        }
    }
    size_t n = walk_frames(rt->layout, rt->code_type, tstate, out, std::min(max, kMaxFrames));
    IdAssigner ids(*rt, cache, sink, ctx);
    if (n && !assign_ids(ids, out, n)) {
        warn_once(Warning::OutOfMemory, "out of memory for the Python code registry");
        return 0;
    }
    return n;
}

void reset_after_fork() {
    g_lock.reset();
    g_registry.clear();
    g_generation.fetch_add(1, std::memory_order_relaxed);
    reset_detection_after_fork();
}

} // namespace gpuleak::python
