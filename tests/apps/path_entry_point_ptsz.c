/* Built with CUDA_API_PER_THREAD_DEFAULT_STREAM: cudaGetDriverEntryPointByVersion becomes its _ptsz
 * form, for which cudaEnableDefault means "per-thread", so the pool allocator resolves to
 * cuMemAllocFromPoolAsync_ptsz. */
#include "path_entry_point_ptsz.h"

#include "app_check.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "path_entry_point_ptsz.c must be compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

__attribute__((noinline)) CUdeviceptr entry_ptsz_default_leak(void) {
    void* fn = NULL;
    enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    APP_OK(cudaGetDriverEntryPointByVersion("cuMemAllocFromPoolAsync", &fn, 12000,
                                            cudaEnableDefault, &status));
    APP_CHECK(status == cudaDriverEntryPointSuccess, "cuMemAllocFromPoolAsync: status %d",
              (int)status);
    app_expect_resolved(fn, "cuMemAllocFromPoolAsync_ptsz");
    cudaMemPool_t pool = NULL;
    APP_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CUdeviceptr p = 0;
    APP_OK(((PFN_cuMemAllocFromPoolAsync_v11020_ptsz)fn)(&p, 7000005, pool, CU_STREAM_PER_THREAD));
    return p;
}
