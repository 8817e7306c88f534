/* early_threads: threads that exist before tracing starts. A constructor of the program starts 4
 * threads before main (and before the first CUDA call, which starts the preload's session); a
 * constructor of libearly_alloc.so, a library the program links, allocates 777777 bytes before
 * main. main calls cuInit and releases the threads, which each make K alloc/free pairs of 4096
 * bytes and leak one buffer of 8192 + i bytes.
 *
 * Ground truth (K = argv[1], default 1000): allocations 4 * (K + 1) + 1, frees 4 * K, live at end
 * 5 blocks, 777777 + 4 * 8192 + 0 + 1 + 2 + 3 bytes. */
#include "app_check.h"

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define THREADS 4

static pthread_t g_threads[THREADS];
static atomic_int g_go;
static long g_pairs = 1000;

__attribute__((noinline)) static void early_pair(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 4096));
    APP_OK(cuMemFree(p));
}

__attribute__((noinline)) static void early_leak(long i) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 8192 + (size_t)i));
}

static void* worker(void* arg) {
    while (!atomic_load(&g_go))
        sched_yield();
    for (long i = 0; i < g_pairs; ++i)
        early_pair();
    early_leak((long)arg);
    return NULL;
}

__attribute__((constructor(101))) static void start_threads_before_main(void) {
    for (long i = 0; i < THREADS; ++i)
        APP_CHECK(pthread_create(&g_threads[i], NULL, worker, (void*)i) == 0, "pthread_create");
}

int main(int argc, char** argv) {
    if (argc > 1) g_pairs = strtol(argv[1], NULL, 10);
    APP_OK(cuInit(0));
    atomic_store(&g_go, 1);
    for (int i = 0; i < THREADS; ++i)
        pthread_join(g_threads[i], NULL);
    app_expect_calls("cuMemAlloc_v2", THREADS * (g_pairs + 1) + 1);
    app_expect_device_used(0, 777777 + 4 * 8192 + 6);
    return 0;
}
