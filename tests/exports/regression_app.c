/* regression_app: one training loop built twice, for `gpuleak-report --baseline` (tests/exports).
 * The baseline build (regression_base) keeps nothing across iterations; the new build
 * (regression_new, -DGPULEAK_TEST_REGRESSION) adds a function, which moves every address below it,
 * moves the lines below it (a #line directive stands for an edit above them), and keeps one
 * 1000000-byte output per iteration at keep_output.
 *
 * Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2, 10 iterations):
 *   load_weights   1 x 4000000, kept to the end (both builds)
 *   step_scratch  10 x 2000000, freed in the iteration (both builds)
 *   keep_output   10 x 1000000 kept: a leak of 1 MB per iteration (new build only) */
#include "app_check.h"

#include <cuda_runtime_api.h>

#define ITERATIONS 10

#ifdef GPULEAK_TEST_REGRESSION
__attribute__((noinline)) void* keep_output(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 1000000));
    return p;
}
#line 300
#endif

__attribute__((noinline)) void* load_weights(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 4000000));
    return p;
}

__attribute__((noinline)) void step_scratch(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 2000000));
    APP_OK(cudaFree(p));
}

int main(void) {
    load_weights();
    for (int i = 0; i < ITERATIONS; ++i) {
        step_scratch();
#ifdef GPULEAK_TEST_REGRESSION
        keep_output();
#endif
    }
    return 0;
}
