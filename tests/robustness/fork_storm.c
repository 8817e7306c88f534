/* fork_storm: fork while other threads are inside the tracer. 4 threads make alloc/free pairs
 * without pause while the main thread forks 20 times. Even-numbered children exit(0) at once
 * (running the library destructors on the state copied mid-event); odd-numbered ones exec this
 * program again as "fork_storm child", a fresh process that allocates 2000002 bytes and frees it.
 * (Children do not call the fake driver before exec: like real CUDA, it is not fork-safe while
 * other threads are inside it.) A tracer whose fork handlers leave a lock held, or that writes
 * into its parent's file, hangs or fails here.
 *
 * Ground truth: every child exits 0. The parent: 4 * K + 1 allocations (K = argv[1], default 2000),
 * 4 * K frees, one leak of 1000001 bytes. Each exec'd child: its own trace with 1 allocation and 1
 * free. The forked-only children write nothing. */
#include "app_check.h"

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define FORKS 20

static long g_pairs = 2000;

__attribute__((noinline)) static void storm_pair(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 65536));
    APP_OK(cuMemFree(p));
}

__attribute__((noinline)) static void child_work(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 2000002));
    APP_OK(cuMemFree(p));
}

__attribute__((noinline)) static void parent_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 1000001));
}

static void* worker(void* arg) {
    (void)arg;
    for (long i = 0; i < g_pairs; ++i)
        storm_pair();
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], "child")) {
        APP_OK(cuInit(0));
        child_work();
        return 0;
    }
    if (argc > 1) g_pairs = strtol(argv[1], NULL, 10);
    APP_OK(cuInit(0));
    parent_leak();
    pthread_t threads[THREADS];
    for (long i = 0; i < THREADS; ++i)
        APP_CHECK(pthread_create(&threads[i], NULL, worker, NULL) == 0, "pthread_create");
    for (int i = 0; i < FORKS; ++i) {
        pid_t child = fork();
        APP_CHECK(child >= 0, "fork failed");
        if (child == 0) {
            if (i % 2 == 0) exit(0);
            execl("/proc/self/exe", "fork_storm", "child", (char*)NULL);
            _exit(127);
        }
        int status = 0;
        APP_CHECK(waitpid(child, &status, 0) == child, "waitpid");
        APP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed (status 0x%x)", i,
                  status);
    }
    for (int i = 0; i < THREADS; ++i)
        pthread_join(threads[i], NULL);
    app_expect_device_used(0, 1000001);
    return 0;
}
