// Our own declarations of the parts of the CUDA driver and runtime API that libgpuleak hooks or
// calls, so that building it needs no CUDA toolkit (the preload links no CUDA library either).
// Names are NVIDIA's, inside gpuleak::cuda. Only what the hooks use is declared: handles the hooks
// only pass along are incomplete types; structs they read or take by value have the full layout;
// enums hold only the values the hooks use.
//
// Every declaration here is checked against NVIDIA's cuda.h, cudaTypedefs.h and cuda_runtime_api.h
// where a toolkit is installed (tests/cuda_api/cuda_api_test.cpp): each PFN type, parameter by
// parameter, each enum's underlying type and values, each struct's size, alignment and field
// offsets. Adding a type here without its line in that test fails that test's build.
//
// The PFN types of the hooked entry points are generated from the hook lists (hooks/hook_list.h).
// Nothing here may be named like a macro of NVIDIA's headers (CU_STREAM_LEGACY, CU_IPC_HANDLE_SIZE,
// cuGetProcAddress, ...): the test includes both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hooks/hook_list.h"

namespace gpuleak::cuda {

// ---------------------------------------------------------------------------------------------
// Scalars (x86-64 Linux: CUdeviceptr is the 64-bit CUdeviceptr_v2).
using cuuint64_t = std::uint64_t;
using CUdeviceptr = unsigned long long;
using CUdevice = int;
using CUmemGenericAllocationHandle = unsigned long long;

// ---------------------------------------------------------------------------------------------
// Handles the hooks only pass along or compare (NVIDIA's struct tags).
struct CUstream_st;
struct CUmemPoolHandle_st;
struct CUarray_st;
struct CUmipmappedArray_st;
struct CUgraph_st;
struct CUgraphNode_st;
struct CUextMemory_st;
struct cudaArray;
using CUstream = CUstream_st*;
using CUmemoryPool = CUmemPoolHandle_st*;
using CUarray = CUarray_st*;
using CUmipmappedArray = CUmipmappedArray_st*;
using CUgraph = CUgraph_st*;
using CUgraphNode = CUgraphNode_st*;
using CUexternalMemory = CUextMemory_st*;
using cudaStream_t = CUstream_st*;
using cudaMemPool_t = CUmemPoolHandle_st*;
using cudaArray_t = cudaArray*;

// Structs the hooks take by pointer and never read.
struct CUmemPoolPtrExportData;
struct CUmemAccessDesc;
struct cudaPitchedPtr;
struct cudaChannelFormatDesc;

// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD.
inline CUstream stream_legacy() {
    return reinterpret_cast<CUstream>(std::uintptr_t{0x1});
}
inline CUstream stream_per_thread() {
    return reinterpret_cast<CUstream>(std::uintptr_t{0x2});
}
// CU_IPC_HANDLE_SIZE.
inline constexpr std::size_t kIpcHandleSize = 64;

// ---------------------------------------------------------------------------------------------
// Enumerations: E(type, values), values as V(name, value); underlying type as GCC and Clang give
// NVIDIA's (unsigned int: none of them has a negative value).
#define GPULEAK_CUDA_ENUMS(E)                                                                      \
    E(CUresult, GPULEAK_CU_RESULT)                                                                 \
    E(CUstreamCaptureStatus, GPULEAK_CU_STREAM_CAPTURE_STATUS)                                     \
    E(CUdriverProcAddress_flags, GPULEAK_CU_DRIVER_PROC_ADDRESS_FLAGS)                             \
    E(CUdriverProcAddressQueryResult, GPULEAK_CU_DRIVER_PROC_ADDRESS_QUERY_RESULT)                 \
    E(CUmemLocationType, GPULEAK_CU_MEM_LOCATION_TYPE)                                             \
    E(CUmemAllocationType, GPULEAK_CU_MEM_ALLOCATION_TYPE)                                         \
    E(CUmemAllocationHandleType, GPULEAK_CU_MEM_ALLOCATION_HANDLE_TYPE)                            \
    E(CUarray_format, GPULEAK_CU_ARRAY_FORMAT)                                                     \
    E(cudaError_t, GPULEAK_CUDA_ERROR)                                                             \
    E(cudaDriverEntryPointQueryResult, GPULEAK_CUDA_DRIVER_ENTRY_POINT_QUERY_RESULT)

#define GPULEAK_CU_RESULT(V)                                                                       \
    V(CUDA_SUCCESS, 0) V(CUDA_ERROR_OUT_OF_MEMORY, 2) V(CUDA_ERROR_NOT_INITIALIZED, 3)
#define GPULEAK_CU_STREAM_CAPTURE_STATUS(V) V(CU_STREAM_CAPTURE_STATUS_NONE, 0)
#define GPULEAK_CU_DRIVER_PROC_ADDRESS_FLAGS(V) V(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 2)
#define GPULEAK_CU_DRIVER_PROC_ADDRESS_QUERY_RESULT(V) V(CU_GET_PROC_ADDRESS_SUCCESS, 0)
#define GPULEAK_CU_MEM_LOCATION_TYPE(V) V(CU_MEM_LOCATION_TYPE_DEVICE, 1)
#define GPULEAK_CU_MEM_ALLOCATION_TYPE(V)
#define GPULEAK_CU_MEM_ALLOCATION_HANDLE_TYPE(V)
#define GPULEAK_CU_ARRAY_FORMAT(V)                                                                 \
    V(CU_AD_FORMAT_UNSIGNED_INT8, 0x01)                                                            \
    V(CU_AD_FORMAT_UNSIGNED_INT16, 0x02)                                                           \
    V(CU_AD_FORMAT_UNSIGNED_INT32, 0x03)                                                           \
    V(CU_AD_FORMAT_SIGNED_INT8, 0x08)                                                              \
    V(CU_AD_FORMAT_SIGNED_INT16, 0x09)                                                             \
    V(CU_AD_FORMAT_SIGNED_INT32, 0x0a)                                                             \
    V(CU_AD_FORMAT_HALF, 0x10)                                                                     \
    V(CU_AD_FORMAT_FLOAT, 0x20)
#define GPULEAK_CUDA_ERROR(V) V(cudaSuccess, 0) V(cudaErrorInitializationError, 3)
#define GPULEAK_CUDA_DRIVER_ENTRY_POINT_QUERY_RESULT(V) V(cudaDriverEntryPointSuccess, 0)

#define GPULEAK_CUDA_ENUMERATOR(name, value) name = value,
#define GPULEAK_CUDA_ENUM(type, values)                                                            \
    enum type : unsigned int { values(GPULEAK_CUDA_ENUMERATOR) };
GPULEAK_CUDA_ENUMS(GPULEAK_CUDA_ENUM)
#undef GPULEAK_CUDA_ENUM
#undef GPULEAK_CUDA_ENUMERATOR

// ---------------------------------------------------------------------------------------------
// Structs the hooks read or take by value: NVIDIA's layouts, field for field.
struct CUmemLocation {
    CUmemLocationType type;
    int id;
};

struct CUmemAllocationPropFlags { // NVIDIA's anonymous CUmemAllocationProp::allocFlags
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
};

struct CUmemAllocationProp {
    CUmemAllocationType type;
    CUmemAllocationHandleType requestedHandleTypes;
    CUmemLocation location;
    void* win32HandleMetaData;
    CUmemAllocationPropFlags allocFlags;
};

struct CUmemPoolProps {
    CUmemAllocationType allocType;
    CUmemAllocationHandleType handleTypes;
    CUmemLocation location;
    void* win32SecurityAttributes;
    std::size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
};

struct CUDA_MEM_ALLOC_NODE_PARAMS {
    CUmemPoolProps poolProps;
    const CUmemAccessDesc* accessDescs;
    std::size_t accessDescCount;
    std::size_t bytesize;
    CUdeviceptr dptr;
};

struct CUDA_ARRAY_DESCRIPTOR {
    std::size_t Width;
    std::size_t Height;
    CUarray_format Format;
    unsigned int NumChannels;
};

struct CUDA_ARRAY3D_DESCRIPTOR {
    std::size_t Width;
    std::size_t Height;
    std::size_t Depth;
    CUarray_format Format;
    unsigned int NumChannels;
    unsigned int Flags;
};

struct CUipcMemHandle { // passed by value
    char reserved[kIpcHandleSize];
};

struct CUDA_EXTERNAL_MEMORY_BUFFER_DESC {
    unsigned long long offset;
    unsigned long long size;
    unsigned int flags;
    unsigned int reserved[16];
};

struct cudaExtent { // passed by value
    std::size_t width;
    std::size_t height;
    std::size_t depth;
};

// ---------------------------------------------------------------------------------------------
// Function pointer types. The hooked entry points' come from the hook lists: a driver hook's under
// the name of its cudaTypedefs.h type, a runtime hook's as PFN_<symbol>.
#define GPULEAK_DRIVER_PFN(sym, pfn, qn, minv, maxv, params, args) using pfn = CUresult(*) params;
GPULEAK_DRIVER_HOOKS(GPULEAK_DRIVER_PFN)
#undef GPULEAK_DRIVER_PFN
#define GPULEAK_RUNTIME_PFN(sym, api, params, args) using PFN_##sym = cudaError_t(*) params;
GPULEAK_RUNTIME_HOOKS(GPULEAK_RUNTIME_PFN)
#undef GPULEAK_RUNTIME_PFN

// What the hooks call besides the functions they hook: driver queries, by their cudaTypedefs.h
// names, and runtime functions, as PFN_<name>. X(type name, parameter list).
#define GPULEAK_CUDA_CALLED_DRIVER(X)                                                              \
    X(PFN_cuCtxGetDevice_v2000, (CUdevice * device))                                               \
    X(PFN_cuMemGetInfo_v3020, (std::size_t * free, std::size_t * total))                           \
    X(PFN_cuStreamIsCapturing_v10000, (CUstream stream, CUstreamCaptureStatus * status))           \
    X(PFN_cuMemGetAddressRange_v3020, (CUdeviceptr * base, std::size_t * size, CUdeviceptr dptr))
// cudaGetDriverEntryPoint[ByVersion] with CUDA 12's parameters (runtime_hooks.cpp says why).
#define GPULEAK_CUDA_CALLED_RUNTIME(X)                                                             \
    X(cudaRuntimeGetVersion, (int* version))                                                       \
    X(cudaGetDriverEntryPoint, (const char* symbol, void** fn, unsigned long long flags,           \
                                cudaDriverEntryPointQueryResult* status))                          \
    X(cudaGetDriverEntryPointByVersion,                                                            \
      (const char* symbol, void** fn, unsigned int version, unsigned long long flags,              \
       cudaDriverEntryPointQueryResult* status))

#define GPULEAK_CALLED_DRIVER_PFN(pfn, params) using pfn = CUresult(*) params;
GPULEAK_CUDA_CALLED_DRIVER(GPULEAK_CALLED_DRIVER_PFN)
#undef GPULEAK_CALLED_DRIVER_PFN
#define GPULEAK_CALLED_RUNTIME_PFN(name, params) using PFN_##name = cudaError_t(*) params;
GPULEAK_CUDA_CALLED_RUNTIME(GPULEAK_CALLED_RUNTIME_PFN)
#undef GPULEAK_CALLED_RUNTIME_PFN

} // namespace gpuleak::cuda

namespace gpuleak::hooks {
using namespace gpuleak::cuda; // the hooks speak CUDA's names
} // namespace gpuleak::hooks
