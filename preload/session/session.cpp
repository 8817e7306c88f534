#include "session/session.h"

#include <atomic>
#include <cstdlib>
#include <ctime>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "session/config.h"
#include "session/event_clock.h"
#include "session/fatal_signals.h"
#include "session/trace_writer.h"
#include "support/log.h"

namespace gpuleak::session {

namespace state {
std::atomic<int> g_state{kOff};
std::atomic<bool> g_direct{false};
uint64_t g_start_mono = 0;
} // namespace state

namespace {

using namespace state;
bool g_is_forked_child = false;
// Set by the first ensure_started (before any recorder state exists) and never changed.
std::atomic<const Producer*> g_producer{nullptr};

bool start() {
    load_config();
    if (config().disable) return false;
    const int pid = getpid();
    event_clock::calibrate(config().tsc_clock);
    g_start_mono = event_clock::now_ns();
    char path[4096 + 64];
    expand_output_path(config().output_pattern, pid, g_is_forked_child, path, sizeof path);
    if (!writer::open_file(path)) return false;
    log::info("tracing pid {} into {}", pid, path);
    const Producer* producer = g_producer.load();
    producer->on_start();
    writer::start_thread(producer->collect_idle);
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
    // No producer: tracing was never asked for, so there is no recorder state to forget.
    if (const Producer* producer = g_producer.load()) producer->after_fork_child();
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
    g_producer.load()->at_exit();
}

} // namespace

bool ensure_started_slow(const Producer& producer) {
    int s = g_state.load(std::memory_order_acquire);
    if (s == kActive) return true;
    if (s == kDisabled) return false;
    const Producer* none = nullptr;
    g_producer.compare_exchange_strong(none, &producer);
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

} // namespace gpuleak::session
