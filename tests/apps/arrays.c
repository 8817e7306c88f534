/* arrays: CUDA arrays made through the driver's 2D entry point, cuArrayCreate_v2, which programs
 * bound to libcuda call directly (the runtime's cudaMallocArray reaches cuArray3DCreate_v2
 * instead), and freed by cuArrayDestroy. The driver does not say how much memory an array takes:
 * the size recorded is width x height x element size x channels, each dimension at least 1
 * (docs/allocation-entry-points.md), which the fake driver also charges.
 *
 * Ground truth (device 0, driver called directly; class "array", counted with device memory):
 *   array_2d_leak         cuArrayCreate_v2 256 x 16, FLOAT x 1          16384  leaked
 *   array_1d_transient    cuArrayCreate_v2 1000 x 0, UNSIGNED_INT8 x 4   4000  cuArrayDestroy
 *   array_half2_leak      cuArrayCreate_v2 100 x 12, HALF x 2            4800  leaked
 *   array_three_channels  cuArrayCreate_v2 8 x 8, FLOAT x 3: the driver rejects 3 channels
 *                         (CUDA_ERROR_INVALID_VALUE): a failed allocation of 768 bytes, not an OOM
 *   cuArrayDestroy(NULL)  CUDA_ERROR_INVALID_HANDLE, frees nothing
 * Totals: 3 allocations, 1 free, 1 failed allocation. Live at end: 2 arrays, 21184 bytes.
 * Device peak: 21184, at array_half2_leak (array_1d_transient's 4000 was freed before it). */
#include "app_check.h"

#include <cuda.h>

static CUDA_ARRAY_DESCRIPTOR descriptor(size_t width, size_t height, CUarray_format format,
                                        unsigned channels) {
    CUDA_ARRAY_DESCRIPTOR d = {0};
    d.Width = width;
    d.Height = height;
    d.Format = format;
    d.NumChannels = channels;
    return d;
}

__attribute__((noinline)) CUarray array_2d_leak(void) {
    CUDA_ARRAY_DESCRIPTOR d = descriptor(256, 16, CU_AD_FORMAT_FLOAT, 1);
    CUarray a = NULL;
    APP_OK(cuArrayCreate(&a, &d));
    return a;
}

__attribute__((noinline)) void array_1d_transient(void) {
    CUDA_ARRAY_DESCRIPTOR d = descriptor(1000, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4);
    CUarray a = NULL;
    APP_OK(cuArrayCreate(&a, &d));
    APP_OK(cuArrayDestroy(a));
}

__attribute__((noinline)) CUarray array_half2_leak(void) {
    CUDA_ARRAY_DESCRIPTOR d = descriptor(100, 12, CU_AD_FORMAT_HALF, 2);
    CUarray a = NULL;
    APP_OK(cuArrayCreate(&a, &d));
    return a;
}

__attribute__((noinline)) void array_three_channels(void) {
    CUDA_ARRAY_DESCRIPTOR d = descriptor(8, 8, CU_AD_FORMAT_FLOAT, 3);
    CUarray a = (CUarray)42;
    APP_EXPECT_RC(cuArrayCreate(&a, &d), CUDA_ERROR_INVALID_VALUE);
    APP_CHECK(a == (CUarray)42, "a failed array creation overwrote the caller's handle");
}

int main(void) {
    APP_OK(cuInit(0));
    CUarray kept_2d = array_2d_leak();
    array_1d_transient();
    CUarray kept_half2 = array_half2_leak();
    array_three_channels();
    APP_EXPECT_RC(cuArrayDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);
    APP_CHECK(kept_2d != NULL && kept_half2 != NULL && kept_2d != kept_half2,
              "array handles %p and %p", (void*)kept_2d, (void*)kept_half2);

    app_expect_calls("cuArrayCreate_v2", 4);
    app_expect_calls("cuArrayDestroy", 2);
    app_expect_device_used(0, 16384 + 4800);
    app_expect_device_peak(0, 16384 + 4800);
    return 0;
}
