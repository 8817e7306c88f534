// The trace's lifecycle in the process: a pool of chunks, the queue of sealed ones, the background
// thread that writes them (format/writer.h frames, compresses and checksums each into a block of
// the file and keeps the size limit), the flush a fatal signal asks for, and fork.
#pragma once

#include <atomic>
#include <cstdint>

#include "session/chunk.h"

namespace gpuleak::writer {

// Creates the file (0600, O_EXCL|O_NOFOLLOW: never overwrites, never follows a planted link) and
// writes the file header. False (after one warning) when the trace cannot be written.
bool open_file(const char* path);

Chunk* acquire_chunk();       // never blocks on I/O; nullptr if memory is exhausted
void release_chunk(Chunk* c); // back to the pool without writing
void submit(Chunk* c);        // queue a sealed chunk for the writer thread
void write_now(Chunk* c);     // write synchronously (at exit, after fork, in direct mode)

// The writer thread wakes every flush interval, writes queued chunks, then asks `collect_idle` to
// seal the chunks of threads that have buffered data.
void start_thread(void (*collect_idle)());
// From a signal handler (async-signal-safe): asks the writer thread for one whole cycle (queued
// chunks and every thread's buffered events) and waits for it at most `timeout_ms`. False when
// there is no writer thread or it did not finish in time.
bool flush_from_signal(unsigned timeout_ms);
// Final flush at exit: stops the thread once it is done with the block it may hold (without
// joining: it may be blocked in a write; at most 2 s), then writes the queue here.
void stop_thread();
// Writes every queued chunk on the calling thread (after stop_thread: chunks that application
// threads submitted meanwhile).
void drain();

// Tracing stopped: the file could not be written, or it reached its size limit (GPULEAK_MAX_BYTES
// or RLIMIT_FSIZE) and ends with a Capped record. Read inline by every event.
extern std::atomic<bool> g_stopped;
inline bool failed() {
    return g_stopped.load(std::memory_order_relaxed);
}

// fork support: the child must not inherit the parent's file or queue.
void before_fork();
void after_fork_parent();
void after_fork_child();

} // namespace gpuleak::writer
