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
#include <unistd.h>

#include "gpuleak/format/encoder.h"
#include "session/config.h"
#include "support/log.h"
#include "support/pages.h"

namespace gpuleak::writer {
namespace {

int g_fd = -1;
std::atomic<bool> g_failed{false};
std::atomic<bool> g_capped{false};
std::atomic<uint64_t> g_bytes{0};

// Chunks come from mmap in batches and are recycled; the pool lock is taken once per 64 KiB of events.
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
std::atomic<bool> g_stop{false};
std::atomic<bool> g_wake{false};
void (*g_collect_idle)() = nullptr;

void fail(const char* what, int err) {
    if (!g_failed.exchange(true))
        log::warn("cannot write the trace ({}: {}); tracing stopped, the program continues", what,
                  std::strerror(err));
}

bool write_all(const void* data, size_t n) {
    auto p = static_cast<const uint8_t*>(data);
    while (n) {
        ssize_t w = ::write(g_fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            fail("write", errno);
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
        g_bytes.fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
    }
    return true;
}

// Caller holds g_write_mutex.
void write_locked(Chunk* c) {
    if (g_fd < 0 || g_failed.load() || g_capped.load() || c->used == 0) return;
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
            size_t n = ZSTD_compressCCtx(g_zstd, g_compressed, g_compressed_capacity, c->payload, c->used, 1);
            if (!ZSTD_isError(n) && n < c->used) {
                payload = g_compressed;
                stored = static_cast<uint32_t>(n);
                flags = format::kBlockZstd;
            }
        }
    }
    uint64_t cap = config().max_bytes;
    if (cap && g_bytes.load() + sizeof(format::BlockHeader) + stored > cap) {
        // The analyzer reports a capped trace from the missing TraceEnd and the Capped marker block.
        g_capped.store(true);
        log::warn("trace reached GPULEAK_MAX_BYTES={} bytes; later events are not recorded", cap);
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
    if (payload == c->payload) {
        write_all(&h, sizeof h + stored); // header and payload are adjacent in the chunk
    } else if (write_all(&h, sizeof h)) {
        write_all(payload, stored);
    }
}

void drain_queue() {
    for (;;) {
        Chunk* c;
        {
            std::lock_guard lock(g_queue_mutex);
            c = g_queue_head;
            if (!c) return;
            g_queue_head = c->next;
            if (!g_queue_head) g_queue_tail = nullptr;
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
    while (!g_stop.load()) {
        unsigned ms = config().flush_ms;
        for (unsigned waited = 0; waited < ms && !g_wake.load() && !g_stop.load(); waited += 5) {
            timespec ts{0, 5 * 1000 * 1000};
            nanosleep(&ts, nullptr);
        }
        g_wake.store(false);
        if (g_stop.load()) break;
        drain_queue();
        if (g_collect_idle) g_collect_idle();
        drain_queue();
    }
    g_thread_running.store(false);
    return nullptr;
}

} // namespace

bool open_file(const char* path) {
    int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        log::warn("cannot create trace file {}: {}{}; the program runs untraced", path, std::strerror(err),
                  err == EEXIST ? " (gpuleak never overwrites a file: remove it or set GPULEAK_OUTPUT)" : "");
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
    return write_all(&h, sizeof h);
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
    if (g_queue_tail) g_queue_tail->next = c;
    else g_queue_head = c;
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

void wake() { g_wake.store(true); }

void stop_thread() {
    g_stop.store(true);
    g_thread_running.store(false);
    drain_queue();
}

bool failed() { return g_failed.load() || g_capped.load(); }
uint64_t bytes_written() { return g_bytes.load(); }

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
    g_stop.store(false);
    g_failed.store(false);
    g_capped.store(false);
    g_bytes.store(0);
}

} // namespace gpuleak::writer
