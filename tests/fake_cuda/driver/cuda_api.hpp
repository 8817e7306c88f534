// Every driver source includes cuda.h through this header.
//
// __CUDA_API_VERSION_INTERNAL is what NVIDIA's own driver build defines: it stops cuda.h from
// renaming cuMemAlloc to cuMemAlloc_v2 (and cuMemAllocAsync to cuMemAllocAsync_ptsz) and makes it
// declare every ABI variant under its real exported name. That lets the compiler check each of our
// definitions, legacy and _v2, _ptsz and plain, against NVIDIA's prototypes.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
