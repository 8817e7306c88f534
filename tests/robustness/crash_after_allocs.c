/* crash_after_allocs N ACTION [PAUSE_MS]: makes N device allocations of 1 MiB + i bytes (leaked),
 * printing "ready i" after each, PAUSE_MS apart (default 0), then ends as ACTION says:
 *   sleep           sleeps until killed (the SIGKILL test)
 *   segv            writes through a null pointer
 *   abort           abort()
 *   term            raise(SIGTERM)
 *   _exit           _exit(7) right after the last allocation (no destructor, no flush)
 *   overflow        sets up an alternate signal stack (before tracing starts), then overflows the
 *                   stack
 *   handler-before  installs a SIGSEGV handler before the first CUDA call (it prints "app handler"
 *                   and _exit(42)s), then segv
 *   handler-after   installs that handler after the allocations, makes one more allocation, checks
 *                   the handler is still the installed one (else exit 3), then segv
 * A tracer must not change the exit status of any of them. */
#include "app_check.h"

#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void app_handler(int sig) {
    (void)sig;
    static const char msg[] = "app handler\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(42);
}

static void install_app_handler(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = app_handler;
    sigemptyset(&sa.sa_mask);
    APP_CHECK(sigaction(SIGSEGV, &sa, NULL) == 0, "sigaction failed");
}

__attribute__((noinline)) static void segv(void) {
    volatile int* volatile p = NULL;
    *p = 1;
}

static volatile int g_never = 0;

__attribute__((noinline)) static int overflow(int depth) {
    volatile char pad[4096];
    pad[0] = (char)depth;
    if (g_never) return 0;
    return overflow(depth + 1) + pad[0];
}

__attribute__((noinline)) static void allocate_one(int i) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, (1u << 20) + (size_t)i));
}

static void allocate(int n, long pause_ms) {
    for (int i = 0; i < n; ++i) {
        allocate_one(i);
        printf("ready %d\n", i + 1);
        fflush(stdout);
        if (pause_ms) sleep_ms(pause_ms);
    }
}

int main(int argc, char** argv) {
    APP_CHECK(argc >= 3, "usage: crash_after_allocs N ACTION [PAUSE_MS]");
    int n = atoi(argv[1]);
    const char* action = argv[2];
    long pause_ms = argc > 3 ? atol(argv[3]) : 0;

    if (!strcmp(action, "overflow")) {
        static char alt[1 << 16];
        stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
        APP_CHECK(sigaltstack(&ss, NULL) == 0, "sigaltstack failed");
    }
    if (!strcmp(action, "handler-before")) install_app_handler();

    APP_OK(cuInit(0));
    allocate(n, pause_ms);

    if (!strcmp(action, "sleep")) {
        for (;;)
            pause();
    } else if (!strcmp(action, "segv") || !strcmp(action, "handler-before")) {
        segv();
    } else if (!strcmp(action, "abort")) {
        abort();
    } else if (!strcmp(action, "term")) {
        raise(SIGTERM);
    } else if (!strcmp(action, "_exit")) {
        _exit(7);
    } else if (!strcmp(action, "overflow")) {
        return overflow(0);
    } else if (!strcmp(action, "handler-after")) {
        install_app_handler();
        allocate_one(n);
        struct sigaction now;
        APP_CHECK(sigaction(SIGSEGV, NULL, &now) == 0, "sigaction failed");
        if (now.sa_handler != app_handler) {
            fprintf(stderr, "the SIGSEGV handler was replaced\n");
            return 3;
        }
        segv();
    }
    fprintf(stderr, "unknown action %s\n", action);
    return 2;
}
