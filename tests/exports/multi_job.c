/* multi_job: a job of two processes, each with loops of its own, for the export tests
 * (tests/exports). Run with FAKECUDA_DEVICES=2. Iterations are marked with
 * gpuleak_mark_iteration when the preload is there.
 *
 * Ground truth (cudaMalloc -> cuMemAlloc_v2):
 *   parent, device 0:  load_weights     1 x 8000000, kept to the end            (retained)
 *                      train loop, 12 iterations marked "train":
 *                      train_batch      12 x 2000000, freed in the iteration     (transient)
 *                      keep_activation  12 x 1000000, never freed                (leak, 1 MB/iter)
 *   parent, device 1:  eval loop, 6 iterations marked "eval":
 *                      eval_batch       6 x 3000000, freed in the iteration      (transient)
 *                      then one request of 64 GiB that fails (out of memory)
 *   child (forked before the loops), device 0: 8 iterations marked "child":
 *                      child_cache      8 x 500000, never freed                  (leak)
 *                      child_scratch    8 x 700000, freed in the iteration
 * Parent at end: 8000000 + 12000000 = 20000000 bytes live on device 0, nothing on device 1.
 * Child at end: 4000000 bytes live. */
#include "app_check.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void mark(const char* name) {
    void (*fn)(const char*) = (void (*)(const char*))dlsym(RTLD_DEFAULT, "gpuleak_mark_iteration");
    if (fn) fn(name);
}

/* A macro, so that each function below is the innermost frame of its own site. */
#define ALLOC(bytes)                                                                               \
    ({                                                                                             \
        void* p_ = NULL;                                                                           \
        APP_OK(cudaMalloc(&p_, (bytes)));                                                          \
        p_;                                                                                        \
    })

__attribute__((noinline)) void* load_weights(void) {
    return ALLOC(8000000);
}
__attribute__((noinline)) void* keep_activation(void) {
    return ALLOC(1000000);
}
__attribute__((noinline)) void train_batch(void) {
    APP_OK(cudaFree(ALLOC(2000000)));
}
__attribute__((noinline)) void eval_batch(void) {
    APP_OK(cudaFree(ALLOC(3000000)));
}
__attribute__((noinline)) void* child_cache(void) {
    return ALLOC(500000);
}
__attribute__((noinline)) void child_scratch(void) {
    APP_OK(cudaFree(ALLOC(700000)));
}
__attribute__((noinline)) void try_huge(void) {
    void* p = NULL;
    APP_CHECK(cudaMalloc(&p, 64ull << 30) != 0, "a 64 GiB allocation succeeded");
}

static void child(void) {
    APP_OK(cudaSetDevice(0));
    for (int i = 0; i < 8; ++i) {
        mark("child");
        child_cache();
        child_scratch();
        usleep(2000);
    }
    exit(0);
}

int main(void) {
    APP_OK(cudaSetDevice(0));
    load_weights();
    const pid_t pid = fork();
    APP_CHECK(pid >= 0, "fork failed");
    if (pid == 0) child();
    for (int i = 0; i < 12; ++i) {
        mark("train");
        train_batch();
        keep_activation();
        usleep(2000);
    }
    APP_OK(cudaSetDevice(1));
    for (int i = 0; i < 6; ++i) {
        mark("eval");
        eval_batch();
        usleep(2000);
    }
    try_huge();
    int status = 0;
    APP_CHECK(waitpid(pid, &status, 0) == pid, "waitpid failed");
    APP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (status 0x%x)", status);
    return 0;
}
