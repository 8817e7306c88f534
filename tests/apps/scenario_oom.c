/* scenario_oom: a steady working set, then one request 65x the normal batch that cannot fit. The
 * program sets no limit itself: run it with FAKECUDA_CAPACITY between 29000011 and 93000074 bytes
 * (the tests use 67108864 = 64 MiB). It carries on after the failure and exits 0; it exits 2 if the
 * oversized request unexpectedly succeeded (capacity too large).
 *
 * Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2):
 *   load_weights      1 x 20000002 dev, live until the end, then freed
 *   kv_cache_alloc    1 x  8000008 dev, live until the end, then freed
 *   normal_batch      6 x  1000001 dev, each freed at once (5 before the failure, 1 after)
 *   oversized_batch   1 x 65000065 FAILS with CUDA_ERROR_OUT_OF_MEMORY (cudaErrorMemoryAllocation)
 * Totals: 8 successful allocations, 1 failed allocation, 8 frees. Live at end: 0 blocks, 0 bytes.
 * Device peak: 29000011 (weights + kv cache + one batch).
 * At the failure: requested 65000065; live 28000010 = load_weights 20000002 + kv_cache_alloc
 * 8000008. */
#include "app_check.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

#define BATCH_BYTES 1000001
#define WARMUP_BATCHES 5

__attribute__((noinline)) void* load_weights(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 20000002));
    return p;
}

__attribute__((noinline)) void* kv_cache_alloc(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 8000008));
    return p;
}

__attribute__((noinline)) void normal_batch(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, BATCH_BYTES));
    APP_OK(cudaFree(p));
}

/* Returns 1 when the request failed the way an OOM should. */
__attribute__((noinline)) int oversized_batch(void) {
    void* const untouched = (void*)&untouched;
    void* p = untouched;
    const cudaError_t e = cudaMalloc(&p, 65 * (size_t)BATCH_BYTES);
    if (e == cudaSuccess) {
        APP_OK(cudaFree(p));
        return 0;
    }
    APP_CHECK(e == cudaErrorMemoryAllocation, "oversized cudaMalloc failed with %d, expected %d",
              (int)e, (int)cudaErrorMemoryAllocation);
    APP_CHECK(p == untouched, "a failed cudaMalloc overwrote the caller's pointer");
    APP_EXPECT_RC(cudaGetLastError(), cudaErrorMemoryAllocation);
    return 1;
}

int main(void) {
    void* weights = load_weights();
    void* kv_cache = kv_cache_alloc();
    for (int i = 0; i < WARMUP_BATCHES; ++i)
        normal_batch();
    const int failed = oversized_batch();
    normal_batch();
    APP_OK(cudaFree(kv_cache));
    APP_OK(cudaFree(weights));

    if (!failed) {
        fprintf(stderr,
                "scenario_oom: the oversized request fit; set FAKECUDA_CAPACITY (e.g. 67108864)\n");
        return 2;
    }
    app_expect_calls("cuMemAlloc_v2", 9);
    app_expect_calls("cuMemFree_v2", 8);
    app_expect_device_used(0, 0);
    app_expect_device_peak(0, 29000011);
    return 0;
}
