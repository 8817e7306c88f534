/* scenario_kept_past_loop: each iteration replaces the previous output, so memory stays bounded;
 * the last output outlives the loop, is used once more, and is freed at the end. Not a leak.
 *
 * Ground truth (device 0, cudaMalloc -> cuMemAlloc_v2; per iteration: workspace allocated, new
 * output allocated, previous output freed, workspace freed):
 *   transient_workspace  10 x 3000003 dev, freed in its iteration
 *   keep_last_output     10 x 1000001 dev, each freed by the next iteration; the 10th after the
 * loop summarize_results     1 x 2000002 dev, after the loop, freed at once Totals: 21 allocations,
 * 21 frees. Live at end: 0 blocks, 0 bytes. Device peak: 5000005 (workspace + previous output + new
 * output, iterations 2..10). At the end of the loop 1000001 bytes (the last output) are still live.
 */
#include "app_check.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

#define ITERATIONS 10

__attribute__((noinline)) void* transient_workspace(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 3000003));
    return p;
}

__attribute__((noinline)) void* keep_last_output(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 1000001));
    return p;
}

__attribute__((noinline)) void summarize_results(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 2000002));
    APP_OK(cudaFree(p));
}

int main(void) {
    void* last = NULL;
    for (int i = 0; i < ITERATIONS; ++i) {
        void* workspace = transient_workspace();
        void* output = keep_last_output();
        APP_OK(cudaFree(last)); /* cudaFree(NULL) in the first iteration: reaches no driver free */
        last = output;
        APP_OK(cudaFree(workspace));
    }
    app_expect_device_used(0, 1000001);
    summarize_results();
    APP_OK(cudaFree(last));

    app_expect_calls("cuMemAlloc_v2", 2 * ITERATIONS + 1);
    app_expect_calls("cuMemFree_v2", 2 * ITERATIONS + 1);
    app_expect_device_used(0, 0);
    app_expect_device_peak(0, 5000005);
    return 0;
}
