/* path_runtime_dynamic / path_runtime_static: interception path 7, the runtime API. The same
 * program is linked once against the fake libcudart.so.13 and once against
 * libcudart_fake_static.a; either way the runtime reaches the driver only through the resolver it
 * got from the ("cuGetProcAddress", 12000) self-query, so a tracer recording at the driver level
 * must see exactly one record per runtime call. The _ptsz call comes from path_runtime_ptsz.c,
 * compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM.
 *
 * Ground truth (device 0; the driver entry point each call reaches is in brackets):
 *   runtime_device_leak         cudaMalloc            [cuMemAlloc_v2]           5000001 dev leaked
 *   runtime_device_transient    cudaMalloc            [cuMemAlloc_v2]           5000002 dev
 * cudaFree (cudaFree(NULL): success, reaches no driver free) runtime_async_transient
 * cudaMallocAsync       [cuMemAllocAsync]         5000003 dev     cudaFreeAsync
 *   runtime_async_ptsz_leak     cudaMallocAsync_ptsz  [cuMemAllocAsync_ptsz]    5000004 dev leaked
 *   runtime_pinned_transient    cudaMallocHost        [cuMemHostAlloc]          5000005 pinned
 * cudaFreeHost runtime_pinned_leak         cudaHostAlloc         [cuMemHostAlloc]          5000006
 * pinned  leaked runtime_managed_leak        cudaMallocManaged     [cuMemAllocManaged] 5000007
 * managed leaked runtime_pitch_transient     cudaMallocPitch 5000x1001 [cuMemAllocPitch_v2] pitch
 * 5120, 5125120 dev cudaFree runtime_pool_leak           cudaMallocFromPoolAsync
 * [cuMemAllocFromPoolAsync] 5000008 dev   leaked Totals: 9 allocations (6 dev, 1 managed, 2
 * pinned), 4 frees (3 dev, 1 pinned). Live at end: dev 3 blocks, 15000013 bytes; managed 5000007;
 * pinned 5000006. Device peak: 15125125 (runtime_device_leak + runtime_async_ptsz_leak +
 * runtime_pitch_transient). */
#include "app_check.h"
#include "path_runtime_ptsz.h"

#include <cuda_runtime_api.h>

__attribute__((noinline)) void* runtime_device_leak(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 5000001));
    return p;
}

__attribute__((noinline)) void runtime_device_transient(void) {
    void* p = NULL;
    APP_OK(cudaMalloc(&p, 5000002));
    APP_OK(cudaFree(p));
}

__attribute__((noinline)) void runtime_async_transient(void) {
    void* p = NULL;
    APP_OK(cudaMallocAsync(&p, 5000003, 0));
    APP_OK(cudaFreeAsync(p, 0));
}

__attribute__((noinline)) void runtime_pinned_transient(void) {
    void* p = NULL;
    APP_OK(cudaMallocHost(&p, 5000005));
    APP_OK(cudaFreeHost(p));
}

__attribute__((noinline)) void* runtime_pinned_leak(void) {
    void* p = NULL;
    APP_OK(cudaHostAlloc(&p, 5000006, cudaHostAllocPortable));
    return p;
}

__attribute__((noinline)) void* runtime_managed_leak(void) {
    void* p = NULL;
    APP_OK(cudaMallocManaged(&p, 5000007, cudaMemAttachGlobal));
    return p;
}

__attribute__((noinline)) void runtime_pitch_transient(void) {
    void* p = NULL;
    size_t pitch = 0;
    APP_OK(cudaMallocPitch(&p, &pitch, 5000, 1001));
    APP_CHECK(pitch == 5120, "pitch %zu, expected 5120", pitch);
    APP_OK(cudaFree(p));
}

__attribute__((noinline)) void* runtime_pool_leak(void) {
    cudaMemPool_t pool = NULL;
    APP_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
    void* p = NULL;
    APP_OK(cudaMallocFromPoolAsync(&p, 5000008, pool, 0));
    return p;
}

static void check_linkage(void) {
#ifdef PATH_RUNTIME_STATIC
    APP_CHECK(!app_module_loaded("libcudart"),
              "a shared libcudart is loaded into the static-runtime build");
#else
    APP_CHECK(app_module_loaded("libcudart.so.13"), "libcudart.so.13 is not loaded");
#endif
}

int main(void) {
    check_linkage();
    runtime_device_leak();
    runtime_device_transient();
    APP_OK(cudaFree(NULL));
    runtime_async_transient();
    runtime_async_ptsz_leak();
    runtime_pinned_transient();
    runtime_pinned_leak();
    runtime_managed_leak();
    runtime_pitch_transient();
    runtime_pool_leak();
    APP_OK(cudaDeviceSynchronize());
    APP_OK(cudaGetLastError());

    app_expect_calls("cuMemAlloc_v2", 2);
    app_expect_calls("cuMemFree_v2", 2);
    app_expect_calls("cuMemAllocAsync", 1);
    app_expect_calls("cuMemFreeAsync", 1);
    app_expect_calls("cuMemAllocAsync_ptsz", 1);
    app_expect_calls("cuMemHostAlloc", 2);
    app_expect_calls("cuMemFreeHost", 1);
    app_expect_calls("cuMemAllocHost_v2", 0);
    app_expect_calls("cuMemAllocManaged", 1);
    app_expect_calls("cuMemAllocPitch_v2", 1);
    app_expect_calls("cuMemAllocFromPoolAsync", 1);
    app_expect_device_used(0, 15000013);
    app_expect_device_peak(0, 15125125);
    app_expect_managed_used(5000007);
    app_expect_pinned_used(5000006);
    return 0;
}
