/* scenario_leak_loop: a training-style loop that leaks one output buffer per iteration.
 *
 * Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2, 10 iterations; each iteration allocates the
 * kept output first, then the workspace, then frees the workspace):
 *   keep_output_leak      10 x 1000001 dev, never freed
 *   transient_workspace   10 x 3000003 dev, freed in the same iteration
 * Totals: 20 allocations, 10 frees. Live at end: 10 blocks, 10000010 bytes, all from
 * keep_output_leak. Device peak: 13000013, during the 10th iteration's workspace. */
#include "app_check.h"

#include <cuda_runtime_api.h>

#define ITERATIONS 10

__attribute__((noinline)) void* keep_output_leak(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 1000001));
    return p;
}

__attribute__((noinline)) void transient_workspace(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 3000003));
    APP_OK(cudaFree(p));
}

int main(void) {
    void* outputs[ITERATIONS];
    for (int i = 0; i < ITERATIONS; ++i) {
        outputs[i] = keep_output_leak();
        transient_workspace();
    }
    (void)outputs;

    app_expect_calls("cuMemAlloc_v2", 2 * ITERATIONS);
    app_expect_calls("cuMemFree_v2", ITERATIONS);
    app_expect_device_used(0, 10000010);
    app_expect_device_peak(0, 13000013);
    return 0;
}
