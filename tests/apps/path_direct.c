/* path_direct: interception path 1, direct ELF binding. The program links the (fake) libcuda.so.1
 * and calls the driver's exported ABI names through the PLT, as programs built with -lcuda do.
 * cuda.h renames cuMemAlloc to cuMemAlloc_v2 and so on; the _ptsz calls come from
 * path_direct_ptsz.c, compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM.
 *
 * Ground truth (device 0; sizes in bytes; "dev" = device class, also counts pitched and
 * stream-ordered memory):
 *   direct_device_leak           cuMemAlloc_v2               1000001 dev     leaked
 *   direct_device_transient      cuMemAlloc_v2               1000002 dev     cuMemFree_v2
 *   direct_managed_leak          cuMemAllocManaged           1000003 managed leaked
 *   direct_pitch_leak            cuMemAllocPitch_v2 1000x1001 -> pitch 1024, 1025024 dev leaked
 *   direct_pinned_transient      cuMemAllocHost_v2           1000005 pinned  cuMemFreeHost
 *   direct_pinned_leak           cuMemHostAlloc              1000006 pinned  leaked
 *   direct_async_transient       cuMemAllocAsync             1000007 dev     cuMemFreeAsync
 *   direct_async_leak            cuMemAllocAsync             1000008 dev     leaked
 *   direct_async_ptsz_transient  cuMemAllocAsync_ptsz        1000009 dev     cuMemFreeAsync_ptsz
 *   direct_async_ptsz_leak       cuMemAllocAsync_ptsz        1000010 dev     leaked
 *   direct_pool_transient        cuMemAllocFromPoolAsync     1000011 dev     cuMemFree_v2
 *   direct_pool_leak             cuMemAllocFromPoolAsync     1000012 dev     leaked
 *   direct_pool_ptsz_transient   cuMemAllocFromPoolAsync_ptsz 1000013 dev    cuMemFreeAsync_ptsz
 * Totals: 13 allocations (10 dev, 1 managed, 2 pinned), 6 frees (5 dev, 1 pinned).
 * Live at end: dev 5 blocks, 5025055 bytes; managed 1000003; pinned 1000006.
 * Device peak: 6025068 (the live leaks plus direct_pool_ptsz_transient). */
#include "app_check.h"
#include "path_direct_ptsz.h"

#include <cuda.h>

#define PEAK_BYTES 6025068ULL
#define LIVE_DEVICE_BYTES 5025055ULL

__attribute__((noinline)) CUdeviceptr direct_device_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 1000001));
    return p;
}

__attribute__((noinline)) void direct_device_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 1000002));
    APP_OK(cuMemFree(p));
}

__attribute__((noinline)) CUdeviceptr direct_managed_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocManaged(&p, 1000003, CU_MEM_ATTACH_GLOBAL));
    return p;
}

__attribute__((noinline)) CUdeviceptr direct_pitch_leak(void) {
    CUdeviceptr p = 0;
    size_t pitch = 0;
    APP_OK(cuMemAllocPitch(&p, &pitch, 1000, 1001, 4));
    APP_CHECK(pitch == 1024, "pitch %zu, expected 1024", pitch);
    return p;
}

__attribute__((noinline)) void direct_pinned_transient(void) {
    void* p = NULL;
    APP_OK(cuMemAllocHost(&p, 1000005));
    APP_OK(cuMemFreeHost(p));
}

__attribute__((noinline)) void* direct_pinned_leak(void) {
    void* p = NULL;
    APP_OK(cuMemHostAlloc(&p, 1000006, CU_MEMHOSTALLOC_PORTABLE));
    return p;
}

__attribute__((noinline)) void direct_async_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocAsync(&p, 1000007, NULL));
    APP_OK(cuMemFreeAsync(p, NULL));
}

__attribute__((noinline)) CUdeviceptr direct_async_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocAsync(&p, 1000008, NULL));
    return p;
}

__attribute__((noinline)) void direct_pool_transient(CUmemoryPool pool) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocFromPoolAsync(&p, 1000011, pool, NULL));
    /* cuda.h allows freeing stream-ordered memory with the synchronous free. */
    APP_OK(cuMemFree(p));
}

__attribute__((noinline)) CUdeviceptr direct_pool_leak(CUmemoryPool pool) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocFromPoolAsync(&p, 1000012, pool, NULL));
    return p;
}

int main(void) {
    APP_OK(cuInit(0));
    CUmemoryPool pool = NULL;
    APP_OK(cuDeviceGetDefaultMemPool(&pool, 0));

    direct_device_leak();
    direct_device_transient();
    direct_managed_leak();
    direct_pitch_leak();
    direct_pinned_transient();
    direct_pinned_leak();
    direct_async_transient();
    direct_async_leak();
    direct_async_ptsz_transient();
    direct_async_ptsz_leak();
    direct_pool_transient(pool);
    direct_pool_leak(pool);
    direct_pool_ptsz_transient(pool);

    app_expect_calls("cuMemAlloc_v2", 2);
    app_expect_calls("cuMemFree_v2", 2);
    app_expect_calls("cuMemAllocManaged", 1);
    app_expect_calls("cuMemAllocPitch_v2", 1);
    app_expect_calls("cuMemAllocHost_v2", 1);
    app_expect_calls("cuMemHostAlloc", 1);
    app_expect_calls("cuMemFreeHost", 1);
    app_expect_calls("cuMemAllocAsync", 2);
    app_expect_calls("cuMemFreeAsync", 1);
    app_expect_calls("cuMemAllocAsync_ptsz", 2);
    app_expect_calls("cuMemFreeAsync_ptsz", 2);
    app_expect_calls("cuMemAllocFromPoolAsync", 2);
    app_expect_calls("cuMemAllocFromPoolAsync_ptsz", 1);
    app_expect_calls("cuMemAlloc", 0);
    app_expect_calls("cuMemFree", 0);
    app_expect_device_used(0, LIVE_DEVICE_BYTES);
    app_expect_device_peak(0, PEAK_BYTES);
    app_expect_managed_used(1000003);
    app_expect_pinned_used(1000006);
    return 0;
}
