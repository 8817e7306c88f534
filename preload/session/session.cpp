#include "session/session.h"

#include <atomic>
#include <cstdlib>
#include <ctime>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "recorder/process_info.h"
#include "recorder/python_capture.h"
#include "recorder/recorder.h"
#include "recorder/unwinder.h"
#include "session/config.h"
#include "session/fatal_signals.h"
#include "session/trace_writer.h"
#include "support/log.h"

namespace gpuleak::session {
namespace {

enum State : int { kOff, kStarting, kActive, kDisabled };

std::atomic<int> g_state{kOff};
std::atomic<bool> g_direct{false};
uint64_t g_start_mono = 0;
bool g_is_forked_child = false;

uint64_t mono_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool start() {
    load_config();
    if (config().disable) return false;
    const int pid = getpid();
    g_start_mono = mono_ns();
    char path[4096 + 64];
    expand_output_path(config().output_pattern, pid, g_is_forked_child, path, sizeof path);
    if (!writer::open_file(path)) return false;
    log::info("tracing pid {} into {}", pid, path);
    unwinder::init();
    python_capture::init();
    recorder::write_process_record();
    recorder::scan_modules();
    writer::start_thread(&recorder::collect_idle_chunks);
    fatal_signals::install();
    return true;
}

void on_fork_prepare() {
    if (g_state.load() == kActive) writer::before_fork();
}
void on_fork_parent() {
    if (g_state.load() == kActive) writer::after_fork_parent();
}
void on_fork_child() {
    bool was_active = g_state.load() == kActive;
    if (was_active) writer::after_fork_child();
    recorder::reset_after_fork_child();
    g_is_forked_child = true;
    g_direct.store(false);
    // The child writes its own file, created on its first CUDA event (an exec'd compiler never
    // does).
    g_state.store(kOff);
}

__attribute__((constructor)) void on_load() {
    // Only cheap registration here: the application's libraries may not be initialized yet.
    pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}

__attribute__((destructor)) void on_unload() {
    if (g_state.load() != kActive) return;
    // Frees from destructors that run after this one are still recorded, synchronously.
    writer::stop_thread();
    g_direct.store(true);
    recorder::flush_all_at_exit();
}

} // namespace

bool ensure_started() {
    int s = g_state.load(std::memory_order_acquire);
    if (s == kActive) return true;
    if (s == kDisabled) return false;
    int expected = kOff;
    if (g_state.compare_exchange_strong(expected, kStarting)) {
        bool ok = start();
        g_state.store(ok ? kActive : kDisabled, std::memory_order_release);
        return ok;
    }
    while ((s = g_state.load(std::memory_order_acquire)) == kStarting)
        sched_yield();
    return s == kActive;
}

bool direct_mode() {
    return g_direct.load(std::memory_order_relaxed);
}
uint64_t start_mono_ns() {
    return g_start_mono;
}

} // namespace gpuleak::session
