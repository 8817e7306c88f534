// preload/hooks/cuda_api.h against NVIDIA's headers: libgpuleak.so is built from our own
// declarations of the CUDA API, so that it needs no toolkit; this proves they are NVIDIA's, type
// for type. Nearly all of it is static_asserts, so a mismatch fails this file's build; main()
// checks the few constants that are pointers (not constant expressions).
//
// How types are compared: Nv<T> maps each of our types to NVIDIA's (one line per distinct type
// below, with its own checks), through pointers, const and function types. Each of our PFN types
// mapped this way must be exactly NVIDIA's: cudaTypedefs.h's PFN_ type of the same name for the
// driver, the type of cuda_runtime_api.h's function for the runtime. A type cuda_api.h adds without
// a line here stays ours after mapping, so the check of every PFN that uses it fails.
#include "hooks/cuda_api.h" // first: nothing in it may be changed by NVIDIA's macros

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <type_traits>

namespace ours = gpuleak::cuda;

template <typename T> struct Nv { using type = T; };
template <typename T> using nv_t = typename Nv<T>::type;
template <typename T> struct Nv<T*> { using type = nv_t<T>*; };
template <typename T> struct Nv<const T> { using type = const nv_t<T>; };
template <typename R, typename... A> struct Nv<R(A...)> { using type = nv_t<R>(nv_t<A>...); };

#define GPULEAK_MAP(our_type, their_type)                                                          \
    template <> struct Nv<ours::our_type> { using type = their_type; };

// ---------------------------------------------------------------------------------------------
// Scalars: the same types.
static_assert(std::is_same_v<ours::cuuint64_t, ::cuuint64_t>);
static_assert(std::is_same_v<ours::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<ours::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<ours::CUmemGenericAllocationHandle, ::CUmemGenericAllocationHandle>);

// ---------------------------------------------------------------------------------------------
// Incomplete types: NVIDIA's handles point to the same struct tags.
#define GPULEAK_HANDLE(tag) GPULEAK_MAP(tag, ::tag)
GPULEAK_HANDLE(CUstream_st)
GPULEAK_HANDLE(CUmemPoolHandle_st)
GPULEAK_HANDLE(CUarray_st)
GPULEAK_HANDLE(CUmipmappedArray_st)
GPULEAK_HANDLE(CUgraph_st)
GPULEAK_HANDLE(CUgraphNode_st)
GPULEAK_HANDLE(CUextMemory_st)
GPULEAK_HANDLE(cudaArray)
GPULEAK_HANDLE(CUmemPoolPtrExportData)
GPULEAK_HANDLE(CUmemAccessDesc)
GPULEAK_HANDLE(cudaPitchedPtr)
GPULEAK_HANDLE(cudaChannelFormatDesc)
#undef GPULEAK_HANDLE

#define GPULEAK_SAME_HANDLE(name) static_assert(std::is_same_v<nv_t<ours::name>, ::name>, #name);
GPULEAK_SAME_HANDLE(CUstream)
GPULEAK_SAME_HANDLE(CUmemoryPool)
GPULEAK_SAME_HANDLE(CUarray)
GPULEAK_SAME_HANDLE(CUmipmappedArray)
GPULEAK_SAME_HANDLE(CUgraph)
GPULEAK_SAME_HANDLE(CUgraphNode)
GPULEAK_SAME_HANDLE(CUexternalMemory)
GPULEAK_SAME_HANDLE(cudaStream_t)
GPULEAK_SAME_HANDLE(cudaMemPool_t)
GPULEAK_SAME_HANDLE(cudaArray_t)
#undef GPULEAK_SAME_HANDLE

static_assert(ours::kIpcHandleSize == CU_IPC_HANDLE_SIZE);

// ---------------------------------------------------------------------------------------------
// Enums: every one in GPULEAK_CUDA_ENUMS, its underlying type and each of its values.
#define GPULEAK_VALUE(name, value) static_assert(ours::name == value && ::name == value, #name);
#define GPULEAK_ENUM(type, values)                                                                 \
    GPULEAK_MAP(type, ::type)                                                                      \
    static_assert(                                                                                 \
        std::is_same_v<std::underlying_type_t<ours::type>, std::underlying_type_t<::type>>,        \
        #type ": underlying type");                                                                \
    values(GPULEAK_VALUE)
GPULEAK_CUDA_ENUMS(GPULEAK_ENUM)
#undef GPULEAK_ENUM
#undef GPULEAK_VALUE

// ---------------------------------------------------------------------------------------------
// Structs: size, alignment, and every field's offset and size.
#define GPULEAK_STRUCT(type, theirs)                                                               \
    GPULEAK_MAP(type, theirs)                                                                      \
    static_assert(sizeof(ours::type) == sizeof(theirs), #type ": size");                           \
    static_assert(alignof(ours::type) == alignof(theirs), #type ": alignment");                    \
    static_assert(std::is_trivially_copyable_v<ours::type>);
#define GPULEAK_FIELD(type, theirs, field)                                                         \
    static_assert(offsetof(ours::type, field) == offsetof(theirs, field), #type "::" #field);      \
    static_assert(sizeof(ours::type::field) == sizeof(theirs::field), #type "::" #field);

GPULEAK_STRUCT(CUmemLocation, ::CUmemLocation)
GPULEAK_FIELD(CUmemLocation, ::CUmemLocation, type)
GPULEAK_FIELD(CUmemLocation, ::CUmemLocation, id)

using NvAllocFlags = decltype(::CUmemAllocationProp::allocFlags);
GPULEAK_STRUCT(CUmemAllocationPropFlags, NvAllocFlags)
GPULEAK_FIELD(CUmemAllocationPropFlags, NvAllocFlags, compressionType)
GPULEAK_FIELD(CUmemAllocationPropFlags, NvAllocFlags, gpuDirectRDMACapable)
GPULEAK_FIELD(CUmemAllocationPropFlags, NvAllocFlags, usage)
GPULEAK_FIELD(CUmemAllocationPropFlags, NvAllocFlags, reserved)

GPULEAK_STRUCT(CUmemAllocationProp, ::CUmemAllocationProp)
GPULEAK_FIELD(CUmemAllocationProp, ::CUmemAllocationProp, type)
GPULEAK_FIELD(CUmemAllocationProp, ::CUmemAllocationProp, requestedHandleTypes)
GPULEAK_FIELD(CUmemAllocationProp, ::CUmemAllocationProp, location)
GPULEAK_FIELD(CUmemAllocationProp, ::CUmemAllocationProp, win32HandleMetaData)
GPULEAK_FIELD(CUmemAllocationProp, ::CUmemAllocationProp, allocFlags)

GPULEAK_STRUCT(CUmemPoolProps, ::CUmemPoolProps)
GPULEAK_FIELD(CUmemPoolProps, ::CUmemPoolProps, allocType)
GPULEAK_FIELD(CUmemPoolProps, ::CUmemPoolProps, handleTypes)
GPULEAK_FIELD(CUmemPoolProps, ::CUmemPoolProps, location)
GPULEAK_FIELD(CUmemPoolProps, ::CUmemPoolProps, win32SecurityAttributes)
GPULEAK_FIELD(CUmemPoolProps, ::CUmemPoolProps, maxSize)
GPULEAK_FIELD(CUmemPoolProps, ::CUmemPoolProps, usage)
GPULEAK_FIELD(CUmemPoolProps, ::CUmemPoolProps, reserved)

GPULEAK_STRUCT(CUDA_MEM_ALLOC_NODE_PARAMS, ::CUDA_MEM_ALLOC_NODE_PARAMS)
GPULEAK_FIELD(CUDA_MEM_ALLOC_NODE_PARAMS, ::CUDA_MEM_ALLOC_NODE_PARAMS, poolProps)
GPULEAK_FIELD(CUDA_MEM_ALLOC_NODE_PARAMS, ::CUDA_MEM_ALLOC_NODE_PARAMS, accessDescs)
GPULEAK_FIELD(CUDA_MEM_ALLOC_NODE_PARAMS, ::CUDA_MEM_ALLOC_NODE_PARAMS, accessDescCount)
GPULEAK_FIELD(CUDA_MEM_ALLOC_NODE_PARAMS, ::CUDA_MEM_ALLOC_NODE_PARAMS, bytesize)
GPULEAK_FIELD(CUDA_MEM_ALLOC_NODE_PARAMS, ::CUDA_MEM_ALLOC_NODE_PARAMS, dptr)

GPULEAK_STRUCT(CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR)
GPULEAK_FIELD(CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, Width)
GPULEAK_FIELD(CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, Height)
GPULEAK_FIELD(CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, Format)
GPULEAK_FIELD(CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, NumChannels)

GPULEAK_STRUCT(CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR)
GPULEAK_FIELD(CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Width)
GPULEAK_FIELD(CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Height)
GPULEAK_FIELD(CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Depth)
GPULEAK_FIELD(CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Format)
GPULEAK_FIELD(CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, NumChannels)
GPULEAK_FIELD(CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Flags)

GPULEAK_STRUCT(CUipcMemHandle, ::CUipcMemHandle)
GPULEAK_FIELD(CUipcMemHandle, ::CUipcMemHandle, reserved)

GPULEAK_STRUCT(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, ::CUDA_EXTERNAL_MEMORY_BUFFER_DESC)
GPULEAK_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, ::CUDA_EXTERNAL_MEMORY_BUFFER_DESC, offset)
GPULEAK_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, ::CUDA_EXTERNAL_MEMORY_BUFFER_DESC, size)
GPULEAK_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, ::CUDA_EXTERNAL_MEMORY_BUFFER_DESC, flags)
GPULEAK_FIELD(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, ::CUDA_EXTERNAL_MEMORY_BUFFER_DESC, reserved)

GPULEAK_STRUCT(cudaExtent, ::cudaExtent)
GPULEAK_FIELD(cudaExtent, ::cudaExtent, width)
GPULEAK_FIELD(cudaExtent, ::cudaExtent, height)
GPULEAK_FIELD(cudaExtent, ::cudaExtent, depth)

#undef GPULEAK_FIELD
#undef GPULEAK_STRUCT

// ---------------------------------------------------------------------------------------------
// Function types. Hooked driver entry points: our PFN type is cudaTypedefs.h's of the same name.
#define GPULEAK_DRIVER_HOOK(sym, pfn, qn, minv, maxv, params, args)                                \
    static_assert(std::is_same_v<nv_t<ours::pfn>, ::pfn>, #sym ": " #pfn " is not NVIDIA's");
GPULEAK_DRIVER_HOOKS(GPULEAK_DRIVER_HOOK)
#undef GPULEAK_DRIVER_HOOK

// Hooked runtime entry points: the type of cuda_runtime_api.h's function `api` (a _ptsz variant is
// declared by NVIDIA only under CUDA_API_PER_THREAD_DEFAULT_STREAM, with its base's parameters).
#define GPULEAK_RUNTIME_HOOK(sym, api, params, args)                                               \
    static_assert(std::is_same_v<nv_t<ours::PFN_##sym>, decltype(&::api)>,                         \
                  #sym " differs from cuda_runtime_api.h's " #api);
GPULEAK_RUNTIME_HOOKS(GPULEAK_RUNTIME_HOOK)
#undef GPULEAK_RUNTIME_HOOK

// What the hooks call.
#define GPULEAK_CALLED_DRIVER(pfn, params)                                                         \
    static_assert(std::is_same_v<nv_t<ours::pfn>, ::pfn>, #pfn " differs from NVIDIA's");
GPULEAK_CUDA_CALLED_DRIVER(GPULEAK_CALLED_DRIVER)
#undef GPULEAK_CALLED_DRIVER

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" // cudaGetDriverEntryPoint (CUDA 13)
#define GPULEAK_CALLED_RUNTIME(name, params)                                                       \
    static_assert(std::is_same_v<nv_t<ours::PFN_##name>, decltype(&::name)>,                       \
                  #name " differs from cuda_runtime_api.h's");
GPULEAK_CUDA_CALLED_RUNTIME(GPULEAK_CALLED_RUNTIME)
#undef GPULEAK_CALLED_RUNTIME
#pragma GCC diagnostic pop

#undef GPULEAK_MAP

int main() {
    int failures = 0;
    auto check = [&](bool ok, const char* what) {
        if (!ok) {
            std::fprintf(stderr, "cuda_api.h differs from NVIDIA's: %s\n", what);
            ++failures;
        }
    };
    check(reinterpret_cast<nv_t<ours::CUstream>>(ours::stream_legacy()) == CU_STREAM_LEGACY,
          "stream_legacy() is not CU_STREAM_LEGACY");
    check(reinterpret_cast<nv_t<ours::CUstream>>(ours::stream_per_thread()) == CU_STREAM_PER_THREAD,
          "stream_per_thread() is not CU_STREAM_PER_THREAD");
    if (failures == 0)
        std::printf("cuda_api.h matches the CUDA %d.%d headers\n", CUDA_VERSION / 1000,
                    CUDA_VERSION % 1000 / 10);
    return failures == 0 ? 0 : 1;
}
