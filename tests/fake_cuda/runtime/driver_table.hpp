// The runtime's only connection to the driver, obtained exactly as cudart 13 does (as recorded from
// the real library in runtime/real_cudart13_handshake.txt):
//   dlopen("libcuda.so.1", RTLD_NOW); one dlsym(h, "cuGetProcAddress_v2");
//   through that pointer: the probe ("", 0, 0), "cuInit"/2000, "cuGetProcAddress"/11030 and /12000;
//   every later query through the pointer returned for ("cuGetProcAddress", 12000);
//   then cuDriverGetVersion() and cuInit(0).
// No driver function is ever called by symbol; the library links with --no-undefined to prove it.
#pragma once

#include "cuda_runtime.hpp"

namespace fakecudart {

struct DriverTable {
    cudaError_t status; // cudaSuccess once the handshake and cuInit succeeded

    PFN_cuGetProcAddress_v11030 resolve_v1; // kept, as cudart keeps it, but never used
    PFN_cuGetProcAddress_v12000 resolve;    // every query after the handshake goes here
    PFN_cuInit_v2000 cuInit;

    PFN_cuDeviceGet_v2000 cuDeviceGet;
    PFN_cuDeviceGetCount_v2000 cuDeviceGetCount;
    PFN_cuDriverGetVersion_v2020 cuDriverGetVersion;
    PFN_cuDeviceGetDefaultMemPool_v11020 cuDeviceGetDefaultMemPool;
    PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent;
    PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent;
    PFN_cuCtxGetDevice_v2000 cuCtxGetDevice;
    PFN_cuCtxGetDevice_v13000 cuCtxGetDevice_v2;
    PFN_cuMemGetInfo_v3020 cuMemGetInfo;
    PFN_cuMemAllocManaged_v6000 cuMemAllocManaged;
    PFN_cuMemAlloc_v3020 cuMemAlloc;
    PFN_cuMemAllocPitch_v3020 cuMemAllocPitch;
    PFN_cuMemFree_v3020 cuMemFree;
    PFN_cuMemFreeHost_v2000 cuMemFreeHost;
    PFN_cuMemHostAlloc_v2020 cuMemHostAlloc;
    PFN_cuMemAllocAsync_v11020 cuMemAllocAsync;
    PFN_cuMemAllocAsync_v11020_ptsz cuMemAllocAsync_ptsz;
    PFN_cuMemAllocFromPoolAsync_v11020 cuMemAllocFromPoolAsync;
    PFN_cuMemAllocFromPoolAsync_v11020_ptsz cuMemAllocFromPoolAsync_ptsz;
    PFN_cuMemFreeAsync_v11020 cuMemFreeAsync;
    PFN_cuMemFreeAsync_v11020_ptsz cuMemFreeAsync_ptsz;
};

// Runs the handshake once per process (pthread_once), on first use from any thread.
const DriverTable& driver();

} // namespace fakecudart
