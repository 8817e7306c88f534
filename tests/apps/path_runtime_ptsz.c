/* Built with CUDA_API_PER_THREAD_DEFAULT_STREAM, so cuda_runtime_api.h turns cudaMallocAsync into
 * cudaMallocAsync_ptsz, which the runtime forwards to the driver's cuMemAllocAsync_ptsz. */
#include "path_runtime_ptsz.h"

#include "app_check.h"

#include <cuda_runtime_api.h>

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "path_runtime_ptsz.c must be compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

__attribute__((noinline)) void* runtime_async_ptsz_leak(void) {
    void* p = NULL;
    APP_OK(cudaMallocAsync(&p, 5000004, cudaStreamPerThread));
    return p;
}
