/* scenario_threads: 8 threads, each leaking exactly one buffer and then doing N alloc/free pairs
 * (N = argv[1], default 1000), all through the runtime's lazily initialised driver table.
 *
 * Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2; T = 8 threads, thread index i = 0..7):
 *   thread_leak        T x (4096 + i) dev, never freed: 32796 bytes in all
 *   thread_pair_work   T*N x 65537 dev, each freed at once
 * Totals: T*N + T allocations (8008 for N = 1000), T*N frees (8000). Live at end: 8 blocks,
 * 32796 bytes, all from thread_leak. Every leak happens before any pair (a barrier separates them),
 * so the device peak depends on scheduling only within
 * [32796 + 65537, 32796 + 8 * 65537] = [98333, 557092]. */
#include "app_check.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>

#define THREADS 8
#define PAIR_BYTES 65537

static pthread_barrier_t g_all_leaked;
static long g_pairs = 1000;

__attribute__((noinline)) void* thread_leak(int index) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 4096 + (size_t)index));
    return p;
}

__attribute__((noinline)) void thread_pair_work(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, PAIR_BYTES));
    APP_OK(cudaFree(p));
}

static void* worker(void* arg) {
    thread_leak((int)(long)arg);
    pthread_barrier_wait(&g_all_leaked);
    for (long i = 0; i < g_pairs; ++i)
        thread_pair_work();
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1) g_pairs = strtol(argv[1], NULL, 10);
    APP_CHECK(g_pairs >= 0, "bad pair count %s", argv[1]);
    pthread_barrier_init(&g_all_leaked, NULL, THREADS);
    pthread_t threads[THREADS];
    for (long i = 0; i < THREADS; ++i)
        APP_CHECK(pthread_create(&threads[i], NULL, worker, (void*)i) == 0,
                  "pthread_create failed");
    for (int i = 0; i < THREADS; ++i)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&g_all_leaked);

    app_expect_calls("cuMemAlloc_v2", THREADS * g_pairs + THREADS);
    app_expect_calls("cuMemFree_v2", THREADS * g_pairs);
    app_expect_device_used(0, 32796);
    return 0;
}
