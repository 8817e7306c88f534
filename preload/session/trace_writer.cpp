#include "session/trace_writer.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>

#include <pthread.h>

#include "gpuleak/format/writer.h"
#include "session/config.h"
#include "session/event_clock.h"
#include "session/session.h"
#include "support/log.h"
#include "support/no_destroy.h"
#include "support/pages.h"
#include "support/sleep.h"

namespace gpuleak::writer {

// Tracing stopped: the file could not be created or written, or it reached its size limit. Read on
// every event, without the lock.
std::atomic<bool> g_stopped{false};

namespace {

// The file and what frames blocks into it (format/writer.h): constructed by open_file, never
// destroyed (late frees are written after static destructors have run). Every use is under
// g_write_mutex.
constinit NoDestroy<format::FileSink> g_sink;
constinit NoDestroy<format::TraceWriter> g_trace;

// Chunks come from mmap in batches and are recycled; the pool lock is taken once per 64 KiB of
// events.
std::mutex g_pool_mutex;
Chunk* g_pool = nullptr;

// Sealed chunks waiting for the writer thread, oldest first.
std::mutex g_queue_mutex;
Chunk* g_queue_head = nullptr;
Chunk* g_queue_tail = nullptr;

// Serializes writes to the file (writer thread, exit flush, direct mode).
std::mutex g_write_mutex;

std::atomic<bool> g_thread_running{false};
// Set while the writer thread works through a cycle (it may hold a chunk taken from the queue);
// stop_thread() waits for it to clear. Sequentially consistent with g_stop: the writer sets it
// before it looks at g_stop, stop_thread sets g_stop before it looks at it, so either the writer
// sees the stop or stop_thread sees the writer at work.
std::atomic<bool> g_writer_active{false};
std::atomic<bool> g_stop{false};
std::atomic<bool> g_wake{false};
void (*g_collect_idle)() = nullptr;

// Flush requests from signal handlers: the writer thread completes one full cycle per ticket.
std::atomic<uint64_t> g_flush_requested{0};
std::atomic<uint64_t> g_flush_completed{0};

// The time of a Capped record.
uint64_t trace_ns() {
    return session::since_start(session::event_clock::now_ns());
}

// One warning when tracing stops; the program continues and recording stops too.
void report(const format::WriteStatus& s) {
    if (s.kind == format::WriteStatus::Failed)
        log::warn("cannot write the trace (write: {}); tracing stopped, the program continues",
                  std::strerror(s.error));
    else if (s.kind == format::WriteStatus::Capped && s.sink_limit)
        log::warn(
            "the trace reached the file size limit (ulimit -f: {} bytes); tracing stopped, the "
            "program continues",
            s.limit);
    else if (s.kind == format::WriteStatus::Capped)
        log::warn("the trace reached GPULEAK_MAX_BYTES={} bytes; later events are not recorded",
                  s.limit);
    if (g_trace->stopped()) g_stopped.store(true);
}

// Caller holds g_write_mutex.
void write_locked(Chunk* c) {
    if (!g_sink || !g_sink->is_open() || c->used == 0) return;
    format::BlockMeta meta{c->thread_index, c->sequence, c->first_ts, c->last_ts};
    uint32_t size = format::pack_block(c->payload, c->used, c->column_top(), c->time_used);
    report(
        g_trace->write_block(meta, c->payload, size,
                             c->closing ? format::BlockRole::Closing : format::BlockRole::Events));
}

void drain_queue(bool writer_thread) {
    for (;;) {
        // Once the program exits, the exiting thread writes what is left, in queue order.
        if (writer_thread && g_stop.load()) return;
        Chunk* c;
        {
            std::lock_guard lock(g_queue_mutex);
            c = g_queue_head;
            if (!c) return;
            g_queue_head = c->next;
            if (!g_queue_head) g_queue_tail = nullptr;
        }
        if (writer_thread && config().test_write_delay_ms) sleep_ms(config().test_write_delay_ms);
        {
            std::lock_guard lock(g_write_mutex);
            write_locked(c);
        }
        release_chunk(c);
    }
}

void* writer_main(void*) {
    // Signals meant for the application must never land on the tracer's thread.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
        unsigned ms = config().flush_ms;
        for (unsigned waited = 0; waited < ms && !g_wake.load() && !g_stop.load(); waited += 5) {
            timespec ts{0, 5 * 1000 * 1000};
            nanosleep(&ts, nullptr);
        }
        g_wake.store(false);
        g_writer_active.store(true);
        if (g_stop.load()) break;
        uint64_t ticket = g_flush_requested.load();
        drain_queue(true);
        if (g_collect_idle && !g_stop.load()) g_collect_idle();
        drain_queue(true);
        g_flush_completed.store(ticket);
        g_writer_active.store(false);
    }
    g_writer_active.store(false);
    return nullptr;
}

} // namespace

bool open_file(const char* path) {
    std::lock_guard lock(g_write_mutex);
    if (!g_sink) g_sink.emplace();
    if (int err = g_sink->create(path)) {
        log::warn("cannot create trace file {}: {}{}; the program runs untraced", path,
                  std::strerror(err),
                  err == EEXIST
                      ? " (gpuleak never overwrites a file: remove it or set GPULEAK_OUTPUT)"
                      : "");
        g_stopped.store(true);
        return false;
    }
    format::WriterOptions options{config().compress, config().max_bytes, &trace_ns};
    if (!g_trace)
        g_trace.emplace(*g_sink, options);
    else
        g_trace->reset(options);
    g_stopped.store(false);
    format::WriteStatus s = g_trace->start();
    report(s);
    return s.kind == format::WriteStatus::Written;
}

Chunk* acquire_chunk() {
    {
        std::lock_guard lock(g_pool_mutex);
        if (g_pool) {
            Chunk* c = g_pool;
            g_pool = c->next;
            c->next = nullptr;
            return c;
        }
    }
    void* mem = map_pages(sizeof(Chunk));
    return mem ? new (mem) Chunk() : nullptr;
}

void release_chunk(Chunk* c) {
    c->used = c->time_used = 0;
    c->has_ts = false;
    c->closing = false;
    c->first_ts = c->last_ts = 0;
    std::lock_guard lock(g_pool_mutex);
    c->next = g_pool;
    g_pool = c;
}

void submit(Chunk* c) {
    if (!g_thread_running.load()) {
        write_now(c);
        return;
    }
    c->next = nullptr;
    std::lock_guard lock(g_queue_mutex);
    if (g_queue_tail)
        g_queue_tail->next = c;
    else
        g_queue_head = c;
    g_queue_tail = c;
}

void write_now(Chunk* c) {
    {
        std::lock_guard lock(g_write_mutex);
        write_locked(c);
    }
    release_chunk(c);
}

void start_thread(void (*collect_idle)()) {
    g_collect_idle = collect_idle;
    g_stop.store(false);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    g_thread_running.store(true);
    if (pthread_create(&thread, &attr, writer_main, nullptr) != 0) {
        g_thread_running.store(false); // every chunk is then written by its own thread
        log::warn("cannot start the trace writer thread; writing synchronously");
    }
    pthread_attr_destroy(&attr);
}

bool flush_from_signal(unsigned timeout_ms) {
    // Async-signal-safe: atomics, clock_gettime and nanosleep only. The work (and any lock it
    // needs) happens on the writer thread, so a lock held by the interrupted code costs at most the
    // timeout, never a deadlock.
    if (!g_thread_running.load()) return false;
    uint64_t ticket = g_flush_requested.fetch_add(1) + 1;
    g_wake.store(true);
    timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (g_flush_completed.load() >= ticket) return true;
        if (!g_thread_running.load()) return false;
        timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t waited_ms =
            (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (waited_ms >= static_cast<int64_t>(timeout_ms)) return false;
        timespec slice{0, 1000 * 1000};
        nanosleep(&slice, nullptr);
    }
}

void stop_thread() {
    // The writer thread may hold a chunk it took from the queue and has not written yet (it may be
    // descheduled right there): wait until it is done with it, or the process would exit without
    // that block while later blocks of the same thread are in the file. It takes nothing more once
    // it sees the stop. Bounded, so a write stuck on a dead file system cannot hang the exit.
    g_stop.store(true);
    g_wake.store(true);
    constexpr int kWaitMs = 2000;
    for (int waited = 0; g_writer_active.load() && waited < kWaitMs; ++waited) {
        timespec slice{0, 1000 * 1000};
        nanosleep(&slice, nullptr);
    }
    if (g_writer_active.load())
        log::warn("the trace writer thread did not finish a write within {} ms; the trace may "
                  "lack a block",
                  kWaitMs);
    g_thread_running.store(false);
    drain();
}

void drain() {
    drain_queue(false);
}

void before_fork() {
    g_pool_mutex.lock();
    g_queue_mutex.lock();
    g_write_mutex.lock();
}

void after_fork_parent() {
    g_write_mutex.unlock();
    g_queue_mutex.unlock();
    g_pool_mutex.unlock();
}

void after_fork_child() {
    new (&g_pool_mutex) std::mutex();
    new (&g_queue_mutex) std::mutex();
    new (&g_write_mutex) std::mutex();
    // The parent's queued chunks are the parent's to write.
    g_queue_head = g_queue_tail = nullptr;
    // The file is the parent's: closed here without another byte (the child opens its own).
    if (g_sink) g_sink->close();
    g_thread_running.store(false);
    g_writer_active.store(false);
    g_stop.store(false);
    g_stopped.store(false);
}

} // namespace gpuleak::writer
