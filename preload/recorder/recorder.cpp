#include "recorder/recorder.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>

#include "gpuleak/format/encoder.h"
#include "recorder/global_stream.h"
#include "recorder/process_info.h"
#include "recorder/python_capture.h"
#include "recorder/thread_state.h"
#include "recorder/thread_writer.h"
#include "recorder/unwinder.h"
#include "session/config.h"
#include "session/event_clock.h"
#include "session/session.h"
#include "session/trace_writer.h"
#include "support/log.h"
#include "support/pages.h"
#include "support/sleep.h"

namespace gpuleak::recorder {
namespace {

// What the session calls back (defined at the end of this file).
void on_session_start();
void collect_idle_chunks();
void flush_all_at_exit();
void reset_after_fork_child();
extern const session::Producer kProducer;

using format::Encoder;

using format::kMaxFixedRecord;

std::mutex g_registry_mutex;
ThreadState* g_threads = nullptr; // every thread state, alive or exited (append-only)
std::atomic<uint32_t> g_next_thread_index{1};
pthread_key_t g_exit_key;
std::once_flag g_key_once;

__attribute__((tls_model("initial-exec"))) thread_local ThreadState* t_state = nullptr;

void seal_locked(ThreadState* ts, bool write_immediately) {
    Chunk* c = ts->chunk;
    if (!c || c->used == 0) return;
    c->thread_index = ts->thread_index;
    c->sequence = ts->sequence++;
    ts->chunk = writer::acquire_chunk();
    if (write_immediately)
        writer::write_now(c);
    else
        writer::submit(c);
}

void on_thread_exit(void* p) {
    auto* ts = static_cast<ThreadState*>(p);
    ts->lock.lock();
    if (config().test_thread_exit_delay_ms) sleep_ms(config().test_thread_exit_delay_ms);
    seal_locked(ts, session::direct_mode());
    ts->announced = false;
    ts->lock.unlock();
    // The registry keeps it: the next new thread reuses it, trie included. Last: from here on this
    // thread no longer touches it.
    ts->alive.store(false, std::memory_order_release);
}

ThreadState* create_state() {
    unsigned depth = config().stack_depth;
    size_t bytes = sizeof(ThreadState) + 3 * depth * sizeof(uint64_t);
    void* mem = map_pages(bytes);
    if (!mem) return nullptr;
    auto* ts = new (mem) ThreadState();
    // Without them (no memory) the thread's stacks are all libunwind's, or all walked in full.
    if (void* rules = map_pages(sizeof(unwind::RuleCache)))
        ts->rules = new (rules) unwind::RuleCache();
    if (void* memo = map_pages(unwind::WalkMemo::bytes(depth)))
        ts->walk_memo = unwind::WalkMemo::place(memo, depth);
    auto* arrays = reinterpret_cast<uint64_t*>(static_cast<char*>(mem) + sizeof(ThreadState));
    ts->prev_frames = arrays;
    ts->prev_nodes = arrays + depth;
    ts->scratch = arrays + 2 * depth;
    ts->capacity = depth;
    ts->thread_index = g_next_thread_index.fetch_add(1);
    return ts;
}

ThreadState* self() {
    ThreadState* ts = t_state;
    if (ts) return ts;
    std::call_once(g_key_once, [] { pthread_key_create(&g_exit_key, on_thread_exit); });
    {
        std::lock_guard lock(g_registry_mutex);
        // Reuse the state (and stack trie) of a thread that has exited.
        for (ThreadState* t = g_threads; t; t = t->next_registered)
            if (!t->alive.load(std::memory_order_acquire) && t->capacity >= config().stack_depth) {
                ts = t;
                break;
            }
        if (ts) ts->alive.store(true, std::memory_order_relaxed);
    }
    if (!ts) {
        ts = create_state();
        if (!ts) return nullptr;
        std::lock_guard lock(g_registry_mutex);
        ts->next_registered = g_threads;
        g_threads = ts;
    }
    ts->tid = static_cast<int>(syscall(SYS_gettid));
    unwinder::attach_thread(ts->rules, ts->walk_memo);
    t_state = ts;
    pthread_setspecific(g_exit_key, ts);
    return ts;
}

// Delta from the previous timed record of the chunk; keeps a thread's timestamps monotonic.
uint64_t time_delta(ThreadState* ts, uint64_t t) {
    if (t < ts->last_ts) t = ts->last_ts;
    ts->last_ts = t;
    Chunk* c = ts->chunk;
    if (!c->has_ts) {
        c->has_ts = true;
        c->first_ts = c->last_ts = t;
        return 0;
    }
    uint64_t dt = t - c->last_ts;
    c->last_ts = t;
    return dt;
}

void announce(ThreadState* ts) {
    if (ts->announced) return;
    char name[17] = {};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    if (!reserve(ts, kMaxFixedRecord + sizeof name)) return;
    Encoder e = encoder(ts);
    format::put::thread(e, static_cast<uint64_t>(ts->tid), name);
    commit(ts, e);
    ts->announced = true;
}

// Interns frames[0..n) (innermost first, as unwound) into the thread's trie, writing new nodes.
// `frames` must be ts->scratch: it becomes the previous stack, whose buffer becomes the scratch.
uint64_t intern_native(ThreadState* ts, unsigned n) {
    uint64_t* frames = ts->scratch;
    const uint64_t* prev = ts->prev_frames;
    unsigned prev_n = ts->prev_depth;
    // A loop allocating from one call site: the whole stack as last time, one memcmp.
    if (n == prev_n && std::memcmp(frames, prev, n * sizeof *frames) == 0)
        return ts->prev_nodes[n - 1];
    unsigned common = 0; // outer frames shared with the previous stack
    while (common < n && common < prev_n && prev[prev_n - 1 - common] == frames[n - 1 - common])
        ++common;
    uint64_t node = common ? ts->prev_nodes[common - 1] : 0;
    for (unsigned i = common; i < n; ++i) {
        uint64_t ip = frames[n - 1 - i];
        bool created = false;
        uint64_t child = ts->native.intern(node, ip, created);
        if (!child) {
            ts->prev_depth = 0;
            return node;
        }
        if (created) {
            if (!reserve(ts, kMaxFixedRecord)) {
                ts->prev_depth = 0;
                return 0;
            }
            Encoder e = encoder(ts);
            format::put::stack_node(e, child, node, ip);
            commit(ts, e);
        }
        node = child;
        ts->prev_nodes[i] = node; // indexed from the outermost frame
    }
    ts->scratch = ts->prev_frames;
    ts->prev_frames = frames;
    ts->prev_depth = n;
    return node;
}

// GPULEAK_TEST_UNWIND_VERIFY: libunwind's walk of the same stack, from one frame further in (this
// function's own). A difference from `frames` (the walk's) is a warning and abort(), so that any
// test running a traced program under the knob fails on it.
[[gnu::noinline]] void verify_unwind(const uint64_t* frames, int n, int max) {
    uint64_t theirs[512];
    int m = gpuleak_unwind_fallback(reinterpret_cast<void**>(theirs), std::min(max + 1, 512));
    // theirs[0] is in this function, theirs[1] and frames[0] are two call sites of the caller.
    int i = 1;
    while (i < n && i + 1 < m && frames[i] == theirs[i + 1])
        ++i;
    if (i == n && (m - 1 == n || n == max)) return;
    log::warn("GPULEAK_TEST_UNWIND_VERIFY: the walk and libunwind differ at frame {} of {} and {}: "
              "{} and {}",
              i, n, m - 1, i < n ? frames[i] : 0, i + 1 < m ? theirs[i + 1] : 0);
    abort();
}

// Inlined into every caller so that it is not one more frame to unwind on every event.
__attribute__((always_inline)) inline uint64_t capture_native(ThreadState* ts) {
    int n = unwinder::backtrace(ts->scratch, static_cast<int>(ts->capacity));
    if (config().test_unwind_verify) [[unlikely]]
        verify_unwind(ts->scratch, n, static_cast<int>(ts->capacity));
    if (n <= 0) return 0;
    return intern_native(ts, static_cast<unsigned>(n));
}

// Common prologue of every event: tracing on, thread state ready and locked.
ThreadState* begin_event() {
    if (!session::ensure_started(kProducer) || writer::failed()) return nullptr;
    ThreadState* ts = self();
    if (!ts) return nullptr;
    ts->lock.lock();
    announce(ts);
    return ts;
}

void end_event(ThreadState* ts) {
    if (session::direct_mode()) seal_locked(ts, true);
    ts->lock.unlock();
}

} // namespace

uint64_t now() {
    return session::since_start(session::event_clock::now_ns());
}

uint64_t event_time() {
    return session::ensure_started(kProducer)
               ? session::since_start(session::event_clock::now_ns_before_call())
               : 0;
}

namespace {
// Starts tracing if needed, then now(): for events after their call (an allocation's address).
uint64_t event_time_after_call() {
    return session::ensure_started(kProducer) ? now() : 0;
}
} // namespace

// Makes room for `need` bytes in the thread's chunk; false if no chunk could be had.
bool reserve(ThreadState* ts, size_t need) {
    if (ts->chunk && ts->chunk->room() >= need) return true;
    if (ts->chunk) seal_locked(ts, session::direct_mode());
    if (!ts->chunk) ts->chunk = writer::acquire_chunk();
    return ts->chunk != nullptr;
}

format::Encoder encoder(ThreadState* ts) {
    Chunk* c = ts->chunk;
    return format::Encoder(c->payload + c->used, c->column_top() - c->time_used);
}

void commit(ThreadState* ts, const format::Encoder& e) {
    Chunk* c = ts->chunk;
    c->used = static_cast<uint32_t>(e.position() - c->payload);
    c->time_used = static_cast<uint32_t>(c->column_top() - e.column());
}

void alloc(Api api, MemKind kind, int device, uint64_t address, uint64_t size) {
    uint64_t t = event_time_after_call();
    ThreadState* ts = begin_event();
    if (!ts) return;
    uint64_t stack = capture_native(ts);
    uint64_t py_stack = python_capture::capture(ts);
    if (reserve(ts, kMaxFixedRecord)) {
        Encoder e = encoder(ts);
        format::put::alloc(e, time_delta(ts, t), api, kind, device, address, size, stack, py_stack);
        commit(ts, e);
    }
    end_event(ts);
}

void alloc_failed(Api api, MemKind kind, int device, uint64_t size, int result, uint64_t free_bytes,
                  uint64_t total_bytes) {
    uint64_t t = event_time_after_call();
    ThreadState* ts = begin_event();
    if (!ts) return;
    uint64_t stack = capture_native(ts);
    uint64_t py_stack = python_capture::capture(ts);
    if (reserve(ts, kMaxFixedRecord)) {
        Encoder e = encoder(ts);
        format::put::alloc_failed(e, time_delta(ts, t), api, kind, device, size, result, stack,
                                  py_stack, free_bytes ? free_bytes + 1 : 0,
                                  total_bytes ? total_bytes + 1 : 0);
        commit(ts, e);
    }
    end_event(ts);
}

void free(uint64_t t, Api api, Space space, uint64_t address, int result) {
    ThreadState* ts = begin_event();
    if (!ts) return;
    if (reserve(ts, kMaxFixedRecord)) {
        Encoder e = encoder(ts);
        format::put::free(e, time_delta(ts, t), api, space, address, result);
        commit(ts, e);
    }
    end_event(ts);
}

namespace {
// An event without a stack: `put` writes the record after its delta time.
template <typename Put> void simple_event(uint64_t t, Put&& put) {
    ThreadState* ts = begin_event();
    if (!ts) return;
    if (reserve(ts, kMaxFixedRecord)) {
        Encoder e = encoder(ts);
        put(e, time_delta(ts, t));
        commit(ts, e);
    }
    end_event(ts);
}
} // namespace

void vmm_retain(uint64_t handle, uint64_t address) {
    simple_event(event_time_after_call(),
                 [&](Encoder& e, uint64_t dt) { format::put::vmm_retain(e, dt, handle, address); });
}
void vmm_release(uint64_t t, uint64_t handle) {
    simple_event(t, [&](Encoder& e, uint64_t dt) { format::put::vmm_release(e, dt, handle); });
}
void vmm_map(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle) {
    simple_event(event_time_after_call(), [&](Encoder& e, uint64_t dt) {
        format::put::vmm_map(e, dt, address, size, offset, handle);
    });
}
void vmm_unmap(uint64_t t, uint64_t address, uint64_t size) {
    simple_event(t, [&](Encoder& e, uint64_t dt) { format::put::vmm_unmap(e, dt, address, size); });
}

void marker(const char* name) {
    uint64_t t = event_time_after_call();
    ThreadState* ts = begin_event();
    if (!ts) return;
    size_t len = strnlen(name, 1024);
    if (reserve(ts, kMaxFixedRecord + len)) {
        Encoder e = encoder(ts);
        format::put::marker(e, time_delta(ts, t), std::string_view(name, len));
        commit(ts, e);
    }
    end_event(ts);
}

namespace {

// Seal every thread's partially filled chunk (writer thread, every flush interval).
void collect_idle_chunks() {
    if (modules_changed()) {
        scan_modules();
        python_capture::modules_changed();
        unwinder::modules_changed();
    }
    std::lock_guard lock(g_registry_mutex);
    for (ThreadState* ts = g_threads; ts; ts = ts->next_registered) {
        if (!ts->lock.try_lock()) continue;
        seal_locked(ts, false);
        ts->lock.unlock();
    }
}

// How long the exit waits, in all, for threads that hold their state. A thread holds it inside an
// event, and while its exit hands its last block over; Python's join returns once the thread's
// interpreter state is gone, before its TLS destructors (on_thread_exit) run, so a program can end
// while a worker descheduled on a loaded machine holds its last block, sealed but not yet queued.
// Bounded: a thread stopped inside an event for good must not hang the program's exit.
constexpr uint64_t kExitWaitNs = 2000ull * 1000000;

// The lock of another thread's state, waited for until `deadline` (monotonic_ns); the calling
// thread's own is only tried, since a thread that exits from inside an event would wait for itself.
bool lock_before(ThreadState* ts, uint64_t deadline) {
    if (ts->lock.try_lock()) return true;
    if (ts == t_state) return false;
    while (session::event_clock::monotonic_ns() < deadline) {
        timespec slice{0, 100 * 1000};
        nanosleep(&slice, nullptr);
        if (ts->lock.try_lock()) return true;
    }
    return false;
}

void flush_all_at_exit() {
    const uint64_t deadline = session::event_clock::monotonic_ns() + kExitWaitNs;
    unsigned kept = 0;
    {
        std::lock_guard lock(g_registry_mutex);
        for (ThreadState* ts = g_threads; ts; ts = ts->next_registered) {
            if (!lock_before(ts, deadline)) {
                ++kept;
                continue;
            }
            seal_locked(ts, true);
            ts->lock.unlock();
        }
    }
    if (kept)
        log::warn("{} thread(s) stayed inside an event for {} ms as the program exited; the trace "
                  "lacks their last events",
                  kept, kExitWaitNs / 1000000);
    // A thread that sealed a chunk just before the writer stopped left it in the queue.
    writer::drain();
    global_stream::write(
        kMaxFixedRecord, [](Encoder& e) { format::put::trace_end(e, 0); }, /*closing=*/true);
}

void reset_after_fork_child() {
    new (&g_registry_mutex) std::mutex();
    global_stream::reset_after_fork_child();
    reset_modules_after_fork_child();
    python_capture::reset_after_fork_child();
    // Only the forking thread survives; the others' states are abandoned, not reused.
    ThreadState* me = t_state;
    g_threads = nullptr;
    if (!me) return;
    me->lock.reset();
    if (me->chunk) me->chunk->used = me->chunk->time_used = 0, me->chunk->has_ts = false;
    me->sequence = 0;
    me->last_ts = 0;
    me->announced = false;
    me->native.clear();
    me->python.clear();
    me->prev_depth = 0;
    me->py_prev_depth = 0;
    me->next_registered = nullptr;
    g_threads = me;
}

void on_session_start() {
    unwinder::init();
    python_capture::init();
    write_process_record();
    scan_modules();
}

const session::Producer kProducer{&on_session_start, &collect_idle_chunks, &flush_all_at_exit,
                                  &reset_after_fork_child};

} // namespace
} // namespace gpuleak::recorder
