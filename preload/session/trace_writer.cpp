#include "session/trace_writer.h"

#include <zstd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gpuleak/format/encoder.h"
#include "session/config.h"
#include "session/session.h"
#include "support/log.h"
#include "support/pages.h"

namespace gpuleak::writer {
namespace {

int g_fd = -1;
std::atomic<bool> g_failed{false};
std::atomic<bool> g_capped{false};
std::atomic<uint64_t> g_bytes{0};

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
ZSTD_CCtx* g_zstd = nullptr;
uint8_t* g_compressed = nullptr;
size_t g_compressed_capacity = 0;

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

// A Capped block: header, then tag, dt and the byte count (at most two 10-byte varints).
constexpr uint64_t kCappedPayloadMax = 1 + 2 * format::kMaxVarintBytes;
constexpr uint64_t kCappedBlockBytes = sizeof(format::BlockHeader) + kCappedPayloadMax;
// Room always kept below the size limit: the Capped block, then the TraceEnd block of a clean exit
// (same size bound), so a capped trace still tells a clean exit from a crash.
constexpr uint64_t kReservedBytes = 2 * kCappedBlockBytes;

void fail(const char* what, int err) {
    if (!g_failed.exchange(true))
        log::warn("cannot write the trace ({}: {}); tracing stopped, the program continues", what,
                  std::strerror(err));
}

// write(2) on a file past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills the process. The
// writer thread blocks every signal; an application thread writing in direct mode, at exit or after
// fork blocks SIGXFSZ around the call and takes back a SIGXFSZ that only our write raised, so the
// application's disposition is neither used nor changed.
class SigxfszGuard {
public:
    SigxfszGuard() {
        sigemptyset(&xfsz_);
        sigaddset(&xfsz_, SIGXFSZ);
        pthread_sigmask(SIG_BLOCK, &xfsz_, &old_);
        sigset_t pending;
        was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    }
    ~SigxfszGuard() {
        if (raised_ && !was_pending_) {
            timespec zero{0, 0};
            siginfo_t info;
            sigtimedwait(&xfsz_, &info, &zero);
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    void wrote(ssize_t result, int err) {
        if (result < 0 && err == EFBIG) raised_ = true;
    }

private:
    sigset_t xfsz_, old_;
    bool was_pending_ = false, raised_ = false;
};

// One block (header and payload, possibly in two pieces) written whole or not at all: after a
// failed or partial write the file is cut back to the end of the previous block, so a full disk
// leaves a trace that reads to its last complete block without damage.
bool write_block(const void* first, size_t first_size, const void* second, size_t second_size) {
    SigxfszGuard guard;
    const uint64_t start = g_bytes.load(std::memory_order_relaxed);
    const struct {
        const uint8_t* data;
        size_t size;
    } pieces[2] = {{static_cast<const uint8_t*>(first), first_size},
                   {static_cast<const uint8_t*>(second), second_size}};
    for (const auto& piece : pieces) {
        const uint8_t* p = piece.data;
        size_t n = piece.size;
        while (n) {
            ssize_t w = ::write(g_fd, p, n);
            int err = errno;
            guard.wrote(w, err);
            if (w < 0 && err == EINTR) continue;
            if (w <= 0) {
                if (ftruncate(g_fd, static_cast<off_t>(start)) == 0) g_bytes.store(start);
                fail("write", w < 0 ? err : ENOSPC);
                return false;
            }
            p += w;
            n -= static_cast<size_t>(w);
            g_bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
        }
    }
    return true;
}

// The size the trace must stay within: GPULEAK_MAX_BYTES, or the process's file size limit if that
// is lower (writing past it would fail with EFBIG half-way through a block). 0 = no limit.
uint64_t size_limit(bool& from_rlimit) {
    uint64_t cap = config().max_bytes;
    from_rlimit = false;
    rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (!cap || rl.rlim_cur < cap)) {
        cap = rl.rlim_cur;
        from_rlimit = true;
    }
    return cap;
}

uint64_t trace_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now =
        static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
    uint64_t start = session::start_mono_ns();
    return now > start ? now - start : 0;
}

// Caller holds g_write_mutex. Ends the recording with a Capped record (room for it is always kept
// free below the limit) and stops tracing, with one warning.
void cap_locked(uint64_t cap, bool from_rlimit) {
    if (g_capped.exchange(true)) return;
    struct {
        format::BlockHeader header;
        uint8_t payload[kCappedPayloadMax];
    } block{};
    uint64_t written = g_bytes.load();
    format::Encoder e(block.payload, block.payload + sizeof block.payload);
    e.tag(format::Tag::Capped);
    e.varint(0);
    e.varint(written);
    format::BlockHeader& h = block.header;
    h.stored_size = h.raw_size = static_cast<uint32_t>(e.position() - block.payload);
    h.thread_index = format::kGlobalThreadIndex;
    h.sequence = format::kCappedSequence;
    h.first_ts = h.last_ts = trace_ns();
    format::seal_block_header(h, block.payload);
    if (written + sizeof h + h.stored_size <= cap)
        write_block(&block, sizeof h + h.stored_size, nullptr, 0);
    if (from_rlimit)
        log::warn(
            "the trace reached the file size limit (ulimit -f: {} bytes); tracing stopped, the "
            "program continues",
            cap);
    else
        log::warn("the trace reached GPULEAK_MAX_BYTES={} bytes; later events are not recorded",
                  cap);
}

// The process-wide block written by the library destructor holds the TraceEnd record alone.
bool is_trace_end(const Chunk* c) {
    return c->thread_index == format::kGlobalThreadIndex && c->used > 0 &&
           c->used <= kCappedPayloadMax &&
           c->payload[0] == static_cast<uint8_t>(format::Tag::TraceEnd);
}

// Caller holds g_write_mutex.
void write_locked(Chunk* c) {
    if (g_fd < 0 || g_failed.load() || c->used == 0) return;
    const bool trace_end = is_trace_end(c);
    if (g_capped.load() && !trace_end) return;
    const uint8_t* payload = c->payload;
    uint32_t stored = c->used;
    uint32_t flags = 0;
    if (config().compress) {
        if (!g_zstd) g_zstd = ZSTD_createCCtx();
        size_t bound = ZSTD_compressBound(kChunkPayload);
        if (!g_compressed) {
            g_compressed = static_cast<uint8_t*>(map_pages(bound));
            g_compressed_capacity = g_compressed ? bound : 0;
        }
        if (g_zstd && g_compressed) {
            size_t n = ZSTD_compressCCtx(g_zstd, g_compressed, g_compressed_capacity, c->payload,
                                         c->used, 1);
            if (!ZSTD_isError(n) && n < c->used) {
                payload = g_compressed;
                stored = static_cast<uint32_t>(n);
                flags = format::kBlockZstd;
            }
        }
    }
    bool from_rlimit = false;
    uint64_t cap = size_limit(from_rlimit);
    const uint64_t reserve = trace_end ? 0 : kReservedBytes;
    if (cap && g_bytes.load() + sizeof(format::BlockHeader) + stored + reserve > cap) {
        cap_locked(cap, from_rlimit);
        return;
    }
    format::BlockHeader& h = c->header;
    h.stored_size = stored;
    h.raw_size = c->used;
    h.flags = flags;
    h.thread_index = c->thread_index;
    h.sequence = c->sequence;
    h.first_ts = c->first_ts;
    h.last_ts = c->last_ts;
    format::seal_block_header(h, payload);
    if (payload == c->payload)
        write_block(&h, sizeof h + stored, nullptr, 0); // adjacent in the chunk
    else
        write_block(&h, sizeof h, payload, stored);
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
        if (writer_thread && config().test_write_delay_ms) {
            timespec delay{0, static_cast<long>(config().test_write_delay_ms % 1000) * 1000000};
            delay.tv_sec = config().test_write_delay_ms / 1000;
            nanosleep(&delay, nullptr);
        }
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
    int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        log::warn("cannot create trace file {}: {}{}; the program runs untraced", path,
                  std::strerror(err),
                  err == EEXIST
                      ? " (gpuleak never overwrites a file: remove it or set GPULEAK_OUTPUT)"
                      : "");
        g_failed.store(true);
        return false;
    }
    g_fd = fd;
    g_failed.store(false);
    g_capped.store(false);
    g_bytes.store(0);
    format::FileHeader h{};
    std::memcpy(h.magic, format::kFileMagic, sizeof h.magic);
    h.version = format::kFormatVersion;
    h.header_size = sizeof h;
    std::lock_guard lock(g_write_mutex);
    return write_block(&h, sizeof h, nullptr, 0);
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
    c->used = 0;
    c->has_ts = false;
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

void wake() {
    g_wake.store(true);
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

bool failed() {
    return g_failed.load() || g_capped.load();
}
uint64_t bytes_written() {
    return g_bytes.load();
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
    if (g_fd >= 0) ::close(g_fd);
    g_fd = -1;
    g_thread_running.store(false);
    g_writer_active.store(false);
    g_stop.store(false);
    g_failed.store(false);
    g_capped.store(false);
    g_bytes.store(0);
}

} // namespace gpuleak::writer
