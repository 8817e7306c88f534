/* edge_cases: calls whose failures a tracer must pass through unchanged (and must not count as
 * memory): null, unknown, double and wrong-kind frees, a zero-size request and an impossible one.
 *
 * Ground truth (device 0, driver called directly; default capacity 8 GiB):
 *   cuMemFree_v2(0)                       CUDA_SUCCESS, frees nothing
 *   edge_zero_size          cuMemAlloc_v2 0 bytes        -> CUDA_ERROR_INVALID_VALUE (failed
 * allocation) edge_impossible_request cuMemAlloc_v2 2^50 bytes     -> CUDA_ERROR_OUT_OF_MEMORY
 * (failed allocation; live at the failure: 0 bytes) edge_valid_transient    cuMemAlloc_v2 1200012
 * dev, freed; the second free of the same address
 *                                                       -> CUDA_ERROR_INVALID_VALUE
 *   edge_unknown_free       cuMemFree_v2(0xdead0000)    -> CUDA_ERROR_INVALID_VALUE
 *   edge_wrong_kind_leak    cuMemAlloc_v2 1200013 dev; cuMemFreeHost on it ->
 * CUDA_ERROR_INVALID_VALUE; stays allocated (leaked) Totals: 2 successful allocations, 2 failed
 * allocations, 1 successful free (plus 3 rejected frees and 1 null free). Live at end: 1 block,
 * 1200013 bytes. Device peak: 1200013. */
#include "app_check.h"

#include <cuda.h>

__attribute__((noinline)) void edge_zero_size(void) {
    CUdeviceptr p = 42;
    APP_EXPECT_RC(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
    APP_CHECK(p == 42, "a failed allocation overwrote the caller's pointer");
}

__attribute__((noinline)) void edge_impossible_request(void) {
    CUdeviceptr p = 42;
    APP_EXPECT_RC(cuMemAlloc(&p, (size_t)1 << 50), CUDA_ERROR_OUT_OF_MEMORY);
    APP_CHECK(p == 42, "a failed allocation overwrote the caller's pointer");
}

__attribute__((noinline)) void edge_valid_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 1200012));
    APP_OK(cuMemFree(p));
    APP_EXPECT_RC(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
}

__attribute__((noinline)) void edge_unknown_free(void) {
    APP_EXPECT_RC(cuMemFree((CUdeviceptr)0xdead0000), CUDA_ERROR_INVALID_VALUE);
}

__attribute__((noinline)) CUdeviceptr edge_wrong_kind_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 1200013));
    APP_EXPECT_RC(cuMemFreeHost((void*)p), CUDA_ERROR_INVALID_VALUE);
    return p;
}

int main(void) {
    APP_OK(cuInit(0));
    APP_OK(cuMemFree(0));
    edge_zero_size();
    edge_impossible_request();
    edge_valid_transient();
    edge_unknown_free();
    edge_wrong_kind_leak();

    app_expect_calls("cuMemAlloc_v2", 4);
    app_expect_calls("cuMemFree_v2", 4);
    app_expect_calls("cuMemFreeHost", 1);
    app_expect_device_used(0, 1200013);
    app_expect_device_peak(0, 1200013);
    return 0;
}
