// The one list of the entry points libgpuleak intercepts: GPULEAK_DRIVER_HOOKS (libcuda) and
// GPULEAK_RUNTIME_HOOKS (libcudart). Hooking one more entry point is one entry here; the rest is
// generated from it, or the build (or a test) fails until it is done:
//   - generated: the exported symbol, the wrapper slots the resolvers hand out and the routing
//     table (driver_exports.cpp), the runtime export (runtime_hooks.cpp), the entry point's PFN
//     type (cuda_api.h), the check of that type against NVIDIA's headers (tests/cuda_api), the
//     symbols the preload.exports test expects libgpuleak.so to export;
//   - checked: the format::Api value its records carry must be in GPULEAK_API_LIST
//     (gpuleak/format/records.h: stored in traces, so append only), and every value of that list
//     must be some hook's (static_asserts in driver_exports.cpp); a driver hook needs its impl::
//     function (driver_impls.cpp, what it records: the link fails without it); a new type needs
//     its declaration in cuda_api.h and its line in tests/cuda_api; a symbol that libgpuleak.map's
//     patterns do not cover fails preload.exports.
//
// Only macros here: the types the lists name are declared in cuda_api.h, in gpuleak::cuda.
#pragma once

// X(symbol, PFN type name from cudaTypedefs.h, query name, first cudaVersion,
//   last cudaVersion + 1, parameter list, argument list)
//
// A memory hook's records carry format::Api::<symbol>. The version range is what cuGetProcAddress
// must be asked for to get exactly this ABI variant; it is used only when the driver's pointer
// carries no symbol name (dladdr) to identify it.
#define GPULEAK_NO_MAX 1000000

#define GPULEAK_DRIVER_MEMORY_HOOKS(X)                                                             \
    X(cuMemAlloc_v2, PFN_cuMemAlloc_v3020, "cuMemAlloc", 3020, GPULEAK_NO_MAX,                     \
      (CUdeviceptr * dptr, size_t bytesize), (dptr, bytesize))                                     \
    X(cuMemAllocPitch_v2, PFN_cuMemAllocPitch_v3020, "cuMemAllocPitch", 3020, GPULEAK_NO_MAX,      \
      (CUdeviceptr * dptr, size_t * pitch, size_t width, size_t height, unsigned int elem),        \
      (dptr, pitch, width, height, elem))                                                          \
    X(cuMemAllocManaged, PFN_cuMemAllocManaged_v6000, "cuMemAllocManaged", 6000, GPULEAK_NO_MAX,   \
      (CUdeviceptr * dptr, size_t bytesize, unsigned int flags), (dptr, bytesize, flags))          \
    X(cuMemFree_v2, PFN_cuMemFree_v3020, "cuMemFree", 3020, GPULEAK_NO_MAX, (CUdeviceptr dptr),    \
      (dptr))                                                                                      \
    X(cuMemAllocAsync, PFN_cuMemAllocAsync_v11020, "cuMemAllocAsync", 11020, GPULEAK_NO_MAX,       \
      (CUdeviceptr * dptr, size_t bytesize, CUstream stream), (dptr, bytesize, stream))            \
    X(cuMemAllocAsync_ptsz, PFN_cuMemAllocAsync_v11020_ptsz, "cuMemAllocAsync", 11020,             \
      GPULEAK_NO_MAX, (CUdeviceptr * dptr, size_t bytesize, CUstream stream),                      \
      (dptr, bytesize, stream))                                                                    \
    X(cuMemAllocFromPoolAsync, PFN_cuMemAllocFromPoolAsync_v11020, "cuMemAllocFromPoolAsync",      \
      11020, GPULEAK_NO_MAX,                                                                       \
      (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream stream),                   \
      (dptr, bytesize, pool, stream))                                                              \
    X(cuMemAllocFromPoolAsync_ptsz, PFN_cuMemAllocFromPoolAsync_v11020_ptsz,                       \
      "cuMemAllocFromPoolAsync", 11020, GPULEAK_NO_MAX,                                            \
      (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream stream),                   \
      (dptr, bytesize, pool, stream))                                                              \
    X(cuMemFreeAsync, PFN_cuMemFreeAsync_v11020, "cuMemFreeAsync", 11020, GPULEAK_NO_MAX,          \
      (CUdeviceptr dptr, CUstream stream), (dptr, stream))                                         \
    X(cuMemFreeAsync_ptsz, PFN_cuMemFreeAsync_v11020_ptsz, "cuMemFreeAsync", 11020,                \
      GPULEAK_NO_MAX, (CUdeviceptr dptr, CUstream stream), (dptr, stream))                         \
    X(cuMemCreate, PFN_cuMemCreate_v10020, "cuMemCreate", 10020, GPULEAK_NO_MAX,                   \
      (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp* prop,        \
       unsigned long long flags),                                                                  \
      (handle, size, prop, flags))                                                                 \
    X(cuMemRelease, PFN_cuMemRelease_v10020, "cuMemRelease", 10020, GPULEAK_NO_MAX,                \
      (CUmemGenericAllocationHandle handle), (handle))                                             \
    X(cuMemRetainAllocationHandle, PFN_cuMemRetainAllocationHandle_v11000,                         \
      "cuMemRetainAllocationHandle", 11000, GPULEAK_NO_MAX,                                        \
      (CUmemGenericAllocationHandle * handle, void* addr), (handle, addr))                         \
    X(cuMemMap, PFN_cuMemMap_v10020, "cuMemMap", 10020, GPULEAK_NO_MAX,                            \
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,           \
       unsigned long long flags),                                                                  \
      (ptr, size, offset, handle, flags))                                                          \
    X(cuMemUnmap, PFN_cuMemUnmap_v10020, "cuMemUnmap", 10020, GPULEAK_NO_MAX,                      \
      (CUdeviceptr ptr, size_t size), (ptr, size))                                                 \
    X(cuMemHostAlloc, PFN_cuMemHostAlloc_v2020, "cuMemHostAlloc", 2020, GPULEAK_NO_MAX,            \
      (void** pp, size_t bytesize, unsigned int flags), (pp, bytesize, flags))                     \
    X(cuMemAllocHost_v2, PFN_cuMemAllocHost_v3020, "cuMemAllocHost", 3020, GPULEAK_NO_MAX,         \
      (void** pp, size_t bytesize), (pp, bytesize))                                                \
    X(cuMemFreeHost, PFN_cuMemFreeHost_v2000, "cuMemFreeHost", 2000, GPULEAK_NO_MAX, (void* p),    \
      (p))                                                                                         \
    X(cuArrayCreate_v2, PFN_cuArrayCreate_v3020, "cuArrayCreate", 3020, GPULEAK_NO_MAX,            \
      (CUarray * handle, const CUDA_ARRAY_DESCRIPTOR* desc), (handle, desc))                       \
    X(cuArray3DCreate_v2, PFN_cuArray3DCreate_v3020, "cuArray3DCreate", 3020, GPULEAK_NO_MAX,      \
      (CUarray * handle, const CUDA_ARRAY3D_DESCRIPTOR* desc), (handle, desc))                     \
    X(cuArrayDestroy, PFN_cuArrayDestroy_v2000, "cuArrayDestroy", 2000, GPULEAK_NO_MAX,            \
      (CUarray handle), (handle))                                                                  \
    X(cuMipmappedArrayCreate, PFN_cuMipmappedArrayCreate_v5000, "cuMipmappedArrayCreate", 5000,    \
      GPULEAK_NO_MAX,                                                                              \
      (CUmipmappedArray * handle, const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned int levels),       \
      (handle, desc, levels))                                                                      \
    X(cuMipmappedArrayDestroy, PFN_cuMipmappedArrayDestroy_v5000, "cuMipmappedArrayDestroy", 5000, \
      GPULEAK_NO_MAX, (CUmipmappedArray handle), (handle))                                         \
    X(cuGraphAddMemAllocNode, PFN_cuGraphAddMemAllocNode_v11040, "cuGraphAddMemAllocNode", 11040,  \
      GPULEAK_NO_MAX,                                                                              \
      (CUgraphNode * node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,                   \
       CUDA_MEM_ALLOC_NODE_PARAMS* params),                                                        \
      (node, graph, deps, ndeps, params))                                                          \
    X(cuGraphAddMemFreeNode, PFN_cuGraphAddMemFreeNode_v11040, "cuGraphAddMemFreeNode", 11040,     \
      GPULEAK_NO_MAX,                                                                              \
      (CUgraphNode * node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,                   \
       CUdeviceptr dptr),                                                                          \
      (node, graph, deps, ndeps, dptr))                                                            \
    X(cuIpcOpenMemHandle_v2, PFN_cuIpcOpenMemHandle_v11000, "cuIpcOpenMemHandle", 11000,           \
      GPULEAK_NO_MAX, (CUdeviceptr * dptr, CUipcMemHandle handle, unsigned int flags),             \
      (dptr, handle, flags))                                                                       \
    X(cuIpcCloseMemHandle, PFN_cuIpcCloseMemHandle_v4010, "cuIpcCloseMemHandle", 4010,             \
      GPULEAK_NO_MAX, (CUdeviceptr dptr), (dptr))                                                  \
    X(cuMemPoolImportPointer, PFN_cuMemPoolImportPointer_v11020, "cuMemPoolImportPointer", 11020,  \
      GPULEAK_NO_MAX, (CUdeviceptr * dptr, CUmemoryPool pool, CUmemPoolPtrExportData * data),      \
      (dptr, pool, data))                                                                          \
    X(cuMemHostRegister_v2, PFN_cuMemHostRegister_v6050, "cuMemHostRegister", 6050,                \
      GPULEAK_NO_MAX, (void* p, size_t bytesize, unsigned int flags), (p, bytesize, flags))        \
    X(cuMemHostUnregister, PFN_cuMemHostUnregister_v4000, "cuMemHostUnregister", 4000,             \
      GPULEAK_NO_MAX, (void* p), (p))                                                              \
    X(cuExternalMemoryGetMappedBuffer, PFN_cuExternalMemoryGetMappedBuffer_v10000,                 \
      "cuExternalMemoryGetMappedBuffer", 10000, GPULEAK_NO_MAX,                                    \
      (CUdeviceptr * dptr, CUexternalMemory mem, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* desc),    \
      (dptr, mem, desc))

// The resolvers record nothing: they hand out wrappers for the exact variant the driver returned.
// cuGetProcAddress is the 4-argument original (cuda.h maps the name to _v2): every driver still
// exports it, and CUDA 11.3-11.8 binaries call it.
#define GPULEAK_DRIVER_RESOLVERS(X)                                                                \
    X(cuGetProcAddress, PFN_cuGetProcAddress_v11030, "cuGetProcAddress", 11030, 12000,             \
      (const char* symbol, void** pfn, int version, cuuint64_t flags),                             \
      (symbol, pfn, version, flags))                                                               \
    X(cuGetProcAddress_v2, PFN_cuGetProcAddress_v12000, "cuGetProcAddress", 12000, GPULEAK_NO_MAX, \
      (const char* symbol, void** pfn, int version, cuuint64_t flags,                              \
       CUdriverProcAddressQueryResult* status),                                                    \
      (symbol, pfn, version, flags, status))

#define GPULEAK_DRIVER_HOOKS(X) GPULEAK_DRIVER_MEMORY_HOOKS(X) GPULEAK_DRIVER_RESOLVERS(X)

// X(symbol, api, parameter list, argument list)
//
// The runtime exports record nothing themselves: they tag the record of the driver call they make
// with `api` (a _ptsz variant with its base function's name). Their types are checked against
// cuda_runtime_api.h's declaration of the function named `api`.
#define GPULEAK_RUNTIME_HOOKS(X)                                                                   \
    X(cudaMalloc, cudaMalloc, (void** ptr, size_t size), (ptr, size))                              \
    X(cudaFree, cudaFree, (void* ptr), (ptr))                                                      \
    X(cudaMallocAsync, cudaMallocAsync, (void** ptr, size_t size, cudaStream_t stream),            \
      (ptr, size, stream))                                                                         \
    X(cudaMallocAsync_ptsz, cudaMallocAsync, (void** ptr, size_t size, cudaStream_t stream),       \
      (ptr, size, stream))                                                                         \
    X(cudaFreeAsync, cudaFreeAsync, (void* ptr, cudaStream_t stream), (ptr, stream))               \
    X(cudaFreeAsync_ptsz, cudaFreeAsync, (void* ptr, cudaStream_t stream), (ptr, stream))          \
    X(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync,                                            \
      (void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream),                          \
      (ptr, size, pool, stream))                                                                   \
    X(cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync,                                       \
      (void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream),                          \
      (ptr, size, pool, stream))                                                                   \
    X(cudaMallocHost, cudaMallocHost, (void** ptr, size_t size), (ptr, size))                      \
    X(cudaHostAlloc, cudaHostAlloc, (void** ptr, size_t size, unsigned int flags),                 \
      (ptr, size, flags))                                                                          \
    X(cudaFreeHost, cudaFreeHost, (void* ptr), (ptr))                                              \
    X(cudaMallocManaged, cudaMallocManaged, (void** ptr, size_t size, unsigned int flags),         \
      (ptr, size, flags))                                                                          \
    X(cudaMallocPitch, cudaMallocPitch, (void** ptr, size_t* pitch, size_t width, size_t height),  \
      (ptr, pitch, width, height))                                                                 \
    X(cudaMalloc3D, cudaMalloc3D, (cudaPitchedPtr * ptr, cudaExtent extent), (ptr, extent))        \
    X(cudaMallocArray, cudaMallocArray,                                                            \
      (cudaArray_t * array, const cudaChannelFormatDesc* desc, size_t width, size_t height,        \
       unsigned int flags),                                                                        \
      (array, desc, width, height, flags))                                                         \
    X(cudaMalloc3DArray, cudaMalloc3DArray,                                                        \
      (cudaArray_t * array, const cudaChannelFormatDesc* desc, cudaExtent extent,                  \
       unsigned int flags),                                                                        \
      (array, desc, extent, flags))                                                                \
    X(cudaFreeArray, cudaFreeArray, (cudaArray_t array), (array))                                  \
    X(cudaHostRegister, cudaHostRegister, (void* ptr, size_t size, unsigned int flags),            \
      (ptr, size, flags))                                                                          \
    X(cudaHostUnregister, cudaHostUnregister, (void* ptr), (ptr))
