/* scenario_clean_loop: the same loop shape as scenario_leak_loop, with nothing leaked: model
 * weights are loaded before the loop and freed after it, and each iteration frees what it made.
 *
 * Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2):
 *   load_model_weights    1 x 50000005 dev, freed by release_model_weights after the loop
 *   produce_output       10 x 1000001 dev, freed at the end of its iteration
 *   transient_workspace  10 x 3000003 dev, freed in its iteration (before the output)
 * Totals: 21 allocations, 21 frees. Live at end: 0 blocks, 0 bytes.
 * Device peak: 54000009 (weights + one output + one workspace). */
#include "app_check.h"

#include <cuda_runtime_api.h>

#define ITERATIONS 10

__attribute__((noinline)) void* load_model_weights(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 50000005));
    return p;
}

__attribute__((noinline)) void release_model_weights(void* weights) {
    APP_OK(cudaFree(weights));
}

__attribute__((noinline)) void* produce_output(void) {
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
    void* weights = load_model_weights();
    for (int i = 0; i < ITERATIONS; ++i) {
        void* output = produce_output();
        transient_workspace();
        APP_OK(cudaFree(output));
    }
    release_model_weights(weights);

    app_expect_calls("cuMemAlloc_v2", 2 * ITERATIONS + 1);
    app_expect_calls("cuMemFree_v2", 2 * ITERATIONS + 1);
    app_expect_device_used(0, 0);
    app_expect_device_peak(0, 54000009);
    return 0;
}
