/* exit_after_workers: the program ends as soon as its workers say they are done, as a Python
 * program does after join(). Python's join returns once a thread's interpreter state is gone,
 * before the thread's TLS destructors have run, and gpuleak hands a thread's last block over in
 * one of them: the program's exit can overtake that hand-over. 6 detached workers each make K
 * alloc/free pairs of 4096 bytes and leak one buffer of 8192 + i bytes, then post a semaphore and
 * return; main waits for the 6 posts and returns at once.
 *
 * Ground truth (K = argv[1], default 100): allocations 6 * (K + 1), frees 6 * K, live at end 6
 * blocks, 6 * 8192 + 15 bytes. */
#include "app_check.h"

#include <cuda.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

#define THREADS 6

static sem_t g_done;
static long g_pairs = 100;

__attribute__((noinline)) static void worker_pair(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 4096));
    APP_OK(cuMemFree(p));
}

__attribute__((noinline)) static void worker_leak(long i) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 8192 + (size_t)i));
}

static void* worker(void* arg) {
    for (long i = 0; i < g_pairs; ++i)
        worker_pair();
    worker_leak((long)arg);
    sem_post(&g_done);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1) g_pairs = strtol(argv[1], NULL, 10);
    APP_OK(cuInit(0));
    APP_CHECK(sem_init(&g_done, 0, 0) == 0, "sem_init");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (long i = 0; i < THREADS; ++i) {
        pthread_t thread;
        APP_CHECK(pthread_create(&thread, &attr, worker, (void*)i) == 0, "pthread_create");
    }
    pthread_attr_destroy(&attr);
    for (int i = 0; i < THREADS; ++i)
        while (sem_wait(&g_done) != 0) {
        }
    app_expect_calls("cuMemAlloc_v2", THREADS * (g_pairs + 1));
    app_expect_device_used(0, THREADS * 8192 + 15);
    return 0;
}
