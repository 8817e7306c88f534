// Every runtime source includes the CUDA headers through this header.
//
// __CUDA_API_VERSION_INTERNAL makes cuda_runtime_api.h declare both cudaMallocAsync and
// cudaMallocAsync_ptsz (and the other per-thread twins) under their exported names, so the
// compiler checks each definition against NVIDIA's prototype. cudaTypedefs.h supplies the
// versioned driver pointer types (PFN_cuMemAlloc_v3020, ...) that are the only way this runtime
// reaches the driver.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
