/* Built with CUDA_API_PER_THREAD_DEFAULT_STREAM, so cuda.h turns cuMemAllocAsync into
 * cuMemAllocAsync_ptsz (and likewise the free and pool variants): the same source text binds to
 * different exported symbols, which is how real per-thread-stream programs reach the _ptsz twins.
 */
#include "path_direct_ptsz.h"

#include "app_check.h"

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "path_direct_ptsz.c must be compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

__attribute__((noinline)) void direct_async_ptsz_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocAsync(&p, 1000009, CU_STREAM_PER_THREAD));
    APP_OK(cuMemFreeAsync(p, CU_STREAM_PER_THREAD));
}

__attribute__((noinline)) CUdeviceptr direct_async_ptsz_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocAsync(&p, 1000010, CU_STREAM_PER_THREAD));
    return p;
}

__attribute__((noinline)) void direct_pool_ptsz_transient(CUmemoryPool pool) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAllocFromPoolAsync(&p, 1000013, pool, CU_STREAM_PER_THREAD));
    APP_OK(cuMemFreeAsync(p, CU_STREAM_PER_THREAD));
}
