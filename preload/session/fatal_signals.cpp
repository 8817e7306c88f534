#include "session/fatal_signals.h"

#include <atomic>
#include <cerrno>
#include <csignal>

#include <sys/syscall.h>
#include <unistd.h>

#include "session/config.h"
#include "session/trace_writer.h"

namespace gpuleak::fatal_signals {
namespace {

// Signals whose default action ends the process. SIGKILL and SIGSTOP cannot be caught; what a
// SIGKILL loses is bounded by the flush interval instead.
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL,  SIGFPE,  SIGABRT, SIGTERM,
                            SIGINT,  SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ};
constexpr int kCount = sizeof kSignals / sizeof kSignals[0];

// How long a dying process waits for the writer thread: normally one cycle (milliseconds). It only
// runs out when the interrupted code holds a lock the writer needs; the signal then goes on.
constexpr unsigned kFlushTimeoutMs = 1000;

struct Slot {
    int signal = 0;
    struct sigaction previous {};
    bool installed = false;
};
Slot g_slots[kCount];
std::atomic<bool> g_install_done{false};

bool is_fault(int sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

bool is_default(const struct sigaction& a) {
    return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL;
}

const Slot* slot_for(int sig) {
    for (const Slot& s : g_slots)
        if (s.signal == sig && s.installed) return &s;
    return nullptr;
}

void on_signal(int sig, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    const Slot* slot = slot_for(sig);
    if (!slot) return; // cannot happen: only installed slots route here
    const struct sigaction& previous = slot->previous;
    // Flush when the process is about to die: its default action, or a fault (whose handler, if
    // any, usually ends the process too). An application handler for SIGTERM or SIGINT normally
    // leads to exit(), whose library destructor writes everything anyway.
    if (is_default(previous) || is_fault(sig)) writer::flush_from_signal(kFlushTimeoutMs);
    if (is_default(previous)) {
        // Give the signal its default action back, then let it take it: a real fault re-executes
        // the faulting instruction on return; anything else is sent again and, blocked while this
        // handler runs, is delivered when it returns. Exit status and core dump are unchanged.
        sigaction(sig, &previous, nullptr);
        bool kernel_fault = is_fault(sig) && sig != SIGABRT && info && info->si_code > 0;
        if (!kernel_fault)
            syscall(SYS_tgkill, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), sig);
    } else if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
    }
    errno = saved_errno;
}

} // namespace

void install() {
    if (!config().signals || g_install_done.exchange(true)) return;
    for (int i = 0; i < kCount; ++i) {
        Slot& slot = g_slots[i];
        slot.signal = kSignals[i];
        if (sigaction(slot.signal, nullptr, &slot.previous) != 0) continue;
        if (!(slot.previous.sa_flags & SA_SIGINFO) && slot.previous.sa_handler == SIG_IGN) continue;
        struct sigaction ours {};
        ours.sa_sigaction = on_signal;
        // The application's handler, when we chain to it, must run as it asked: same mask, same
        // restart, reset and nodefer semantics, same stack. With no handler of its own, ours runs
        // on an alternate stack if the program set one up, so a stack overflow can still be
        // flushed.
        ours.sa_mask = slot.previous.sa_mask;
        ours.sa_flags = SA_SIGINFO | (slot.previous.sa_flags &
                                      (SA_RESTART | SA_NODEFER | SA_RESETHAND | SA_ONSTACK));
        if (is_default(slot.previous)) ours.sa_flags |= SA_ONSTACK;
        // Published before the handler can run.
        slot.installed = true;
        if (sigaction(slot.signal, &ours, nullptr) != 0) slot.installed = false;
    }
}

} // namespace gpuleak::fatal_signals
