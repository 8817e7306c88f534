// cuGetProcAddress: maps (base name, cudaVersion, flags) to the ABI variant the real driver would
// return, per cudaTypedefs.h (PFN_<name>_v<since>[_ptsz]).
//
// Every ordinary answer is an exported function, so dladdr() names it exactly. The one exception is
// the self-query ("cuGetProcAddress", 11030 | 12000): like the real driver, it answers with a
// separate, non-exported resolver, and cudart 13 sends all its later queries there
// (runtime/real_cudart13_handshake.txt). A tracer that wraps only the dlsym'd resolver therefore
// misses them, and the separate counters "resolver_self_v1" / "resolver_self_v2" let a test prove
// which resolver was used.
#include "call_log.hpp"
#include "call_names.hpp"
#include "config.hpp"

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

using fakecuda::Call;
using fakecuda::call_id;

namespace {

CUresult self_resolver_v1(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags);
CUresult self_resolver_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* symbolStatus);

struct Route {
    std::string_view base; // what callers ask for
    int since;             // first cudaVersion that gets this variant
    bool per_thread;       // the _ptsz twin, returned only for
                           // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
    std::string_view symbol;
    void* fn;
};

template <typename F> void* address_of(F* f) {
    return reinterpret_cast<void*>(f);
}

std::span<const Route> routes() {
    // Built on first use rather than at load time: a library constructor that resolves symbols
    // during dlopen of libcuda must still see a complete table.
    static const Route table[] = {
        {"cuInit", 2000, false, "cuInit", address_of(&cuInit)},
        {"cuDriverGetVersion", 2020, false, "cuDriverGetVersion", address_of(&cuDriverGetVersion)},
        {"cuDeviceGet", 2000, false, "cuDeviceGet", address_of(&cuDeviceGet)},
        {"cuDeviceGetCount", 2000, false, "cuDeviceGetCount", address_of(&cuDeviceGetCount)},
        {"cuDeviceGetName", 2000, false, "cuDeviceGetName", address_of(&cuDeviceGetName)},
        {"cuDeviceTotalMem", 3020, false, "cuDeviceTotalMem_v2", address_of(&cuDeviceTotalMem_v2)},
        {"cuCtxGetCurrent", 4000, false, "cuCtxGetCurrent", address_of(&cuCtxGetCurrent)},
        {"cuCtxSetCurrent", 4000, false, "cuCtxSetCurrent", address_of(&cuCtxSetCurrent)},
        {"cuCtxGetDevice", 2000, false, "cuCtxGetDevice", address_of(&cuCtxGetDevice)},
        {"cuCtxGetDevice", 13000, false, "cuCtxGetDevice_v2", address_of(&cuCtxGetDevice_v2)},
        {"cuDevicePrimaryCtxRetain", 7000, false, "cuDevicePrimaryCtxRetain",
         address_of(&cuDevicePrimaryCtxRetain)},
        {"cuDevicePrimaryCtxRelease", 7000, false, "cuDevicePrimaryCtxRelease",
         address_of(&cuDevicePrimaryCtxRelease)},
        {"cuDevicePrimaryCtxRelease", 11000, false, "cuDevicePrimaryCtxRelease_v2",
         address_of(&cuDevicePrimaryCtxRelease_v2)},
        {"cuGetErrorString", 6000, false, "cuGetErrorString", address_of(&cuGetErrorString)},
        {"cuGetErrorName", 6000, false, "cuGetErrorName", address_of(&cuGetErrorName)},
        {"cuGetExportTable", 3000, false, "cuGetExportTable", address_of(&cuGetExportTable)},
        {"cuStreamIsCapturing", 10000, false, "cuStreamIsCapturing",
         address_of(&cuStreamIsCapturing)},
        {"cuStreamIsCapturing", 10000, true, "cuStreamIsCapturing_ptsz",
         address_of(&cuStreamIsCapturing_ptsz)},
        {"cuMemGetInfo", 2000, false, "cuMemGetInfo", address_of(&cuMemGetInfo)},
        {"cuMemGetInfo", 3020, false, "cuMemGetInfo_v2", address_of(&cuMemGetInfo_v2)},
        {"cuMemAlloc", 2000, false, "cuMemAlloc", address_of(&cuMemAlloc)},
        {"cuMemAlloc", 3020, false, "cuMemAlloc_v2", address_of(&cuMemAlloc_v2)},
        {"cuMemAllocPitch", 2000, false, "cuMemAllocPitch", address_of(&cuMemAllocPitch)},
        {"cuMemAllocPitch", 3020, false, "cuMemAllocPitch_v2", address_of(&cuMemAllocPitch_v2)},
        {"cuMemAllocManaged", 6000, false, "cuMemAllocManaged", address_of(&cuMemAllocManaged)},
        {"cuMemFree", 2000, false, "cuMemFree", address_of(&cuMemFree)},
        {"cuMemFree", 3020, false, "cuMemFree_v2", address_of(&cuMemFree_v2)},
        {"cuMemAllocHost", 2000, false, "cuMemAllocHost", address_of(&cuMemAllocHost)},
        {"cuMemAllocHost", 3020, false, "cuMemAllocHost_v2", address_of(&cuMemAllocHost_v2)},
        {"cuMemHostAlloc", 2020, false, "cuMemHostAlloc", address_of(&cuMemHostAlloc)},
        {"cuMemFreeHost", 2000, false, "cuMemFreeHost", address_of(&cuMemFreeHost)},
        {"cuMemAllocAsync", 11020, false, "cuMemAllocAsync", address_of(&cuMemAllocAsync)},
        {"cuMemAllocAsync", 11020, true, "cuMemAllocAsync_ptsz", address_of(&cuMemAllocAsync_ptsz)},
        {"cuMemAllocFromPoolAsync", 11020, false, "cuMemAllocFromPoolAsync",
         address_of(&cuMemAllocFromPoolAsync)},
        {"cuMemAllocFromPoolAsync", 11020, true, "cuMemAllocFromPoolAsync_ptsz",
         address_of(&cuMemAllocFromPoolAsync_ptsz)},
        {"cuMemFreeAsync", 11020, false, "cuMemFreeAsync", address_of(&cuMemFreeAsync)},
        {"cuMemFreeAsync", 11020, true, "cuMemFreeAsync_ptsz", address_of(&cuMemFreeAsync_ptsz)},
        {"cuDeviceGetDefaultMemPool", 11020, false, "cuDeviceGetDefaultMemPool",
         address_of(&cuDeviceGetDefaultMemPool)},
        {"cuMemPoolCreate", 11020, false, "cuMemPoolCreate", address_of(&cuMemPoolCreate)},
        {"cuMemPoolDestroy", 11020, false, "cuMemPoolDestroy", address_of(&cuMemPoolDestroy)},
        {"cuMemCreate", 10020, false, "cuMemCreate", address_of(&cuMemCreate)},
        {"cuMemRelease", 10020, false, "cuMemRelease", address_of(&cuMemRelease)},
        {"cuMemRetainAllocationHandle", 11000, false, "cuMemRetainAllocationHandle",
         address_of(&cuMemRetainAllocationHandle)},
        {"cuMemAddressReserve", 10020, false, "cuMemAddressReserve",
         address_of(&cuMemAddressReserve)},
        {"cuMemAddressFree", 10020, false, "cuMemAddressFree", address_of(&cuMemAddressFree)},
        {"cuMemMap", 10020, false, "cuMemMap", address_of(&cuMemMap)},
        {"cuMemUnmap", 10020, false, "cuMemUnmap", address_of(&cuMemUnmap)},
        {"cuMemSetAccess", 10020, false, "cuMemSetAccess", address_of(&cuMemSetAccess)},
        {"cuMemGetAllocationGranularity", 10020, false, "cuMemGetAllocationGranularity",
         address_of(&cuMemGetAllocationGranularity)},
        // What the real libcudart, cuBLAS and NCCL need beyond allocation (api_*_ext.cpp,
        // api_module.cpp, api_stream.cpp, api_memory_ext.cpp).
        {"cuDeviceGetAttribute", 2000, false, "cuDeviceGetAttribute",
         address_of(&cuDeviceGetAttribute)},
        {"cuArray3DCreate", 3020, false, "cuArray3DCreate_v2", address_of(&cuArray3DCreate_v2)},
        {"cuArray3DGetDescriptor", 3020, false, "cuArray3DGetDescriptor_v2",
         address_of(&cuArray3DGetDescriptor_v2)},
        {"cuArrayCreate", 3020, false, "cuArrayCreate_v2", address_of(&cuArrayCreate_v2)},
        {"cuArrayDestroy", 2000, false, "cuArrayDestroy", address_of(&cuArrayDestroy)},
        {"cuArrayGetDescriptor", 3020, false, "cuArrayGetDescriptor_v2",
         address_of(&cuArrayGetDescriptor_v2)},
        {"cuArrayGetMemoryRequirements", 11060, false, "cuArrayGetMemoryRequirements",
         address_of(&cuArrayGetMemoryRequirements)},
        {"cuCtxDisablePeerAccess", 4000, false, "cuCtxDisablePeerAccess",
         address_of(&cuCtxDisablePeerAccess)},
        {"cuCtxEnablePeerAccess", 4000, false, "cuCtxEnablePeerAccess",
         address_of(&cuCtxEnablePeerAccess)},
        {"cuCtxGetApiVersion", 3020, false, "cuCtxGetApiVersion", address_of(&cuCtxGetApiVersion)},
        {"cuCtxGetCacheConfig", 3020, false, "cuCtxGetCacheConfig",
         address_of(&cuCtxGetCacheConfig)},
        {"cuCtxGetFlags", 7000, false, "cuCtxGetFlags", address_of(&cuCtxGetFlags)},
        {"cuCtxGetLimit", 3010, false, "cuCtxGetLimit", address_of(&cuCtxGetLimit)},
        {"cuCtxGetStreamPriorityRange", 5050, false, "cuCtxGetStreamPriorityRange",
         address_of(&cuCtxGetStreamPriorityRange)},
        {"cuCtxPopCurrent", 4000, false, "cuCtxPopCurrent_v2", address_of(&cuCtxPopCurrent_v2)},
        {"cuCtxPushCurrent", 4000, false, "cuCtxPushCurrent_v2", address_of(&cuCtxPushCurrent_v2)},
        {"cuCtxSetCacheConfig", 3020, false, "cuCtxSetCacheConfig",
         address_of(&cuCtxSetCacheConfig)},
        {"cuCtxSetLimit", 3010, false, "cuCtxSetLimit", address_of(&cuCtxSetLimit)},
        {"cuCtxSynchronize", 2000, false, "cuCtxSynchronize", address_of(&cuCtxSynchronize)},
        {"cuCtxSynchronize", 13000, false, "cuCtxSynchronize_v2", address_of(&cuCtxSynchronize_v2)},
        {"cuDestroyExternalMemory", 10000, false, "cuDestroyExternalMemory",
         address_of(&cuDestroyExternalMemory)},
        {"cuDeviceCanAccessPeer", 4000, false, "cuDeviceCanAccessPeer",
         address_of(&cuDeviceCanAccessPeer)},
        {"cuDeviceGetAttribute", 2000, false, "cuDeviceGetAttribute",
         address_of(&cuDeviceGetAttribute)},
        {"cuDeviceGetByPCIBusId", 4010, false, "cuDeviceGetByPCIBusId",
         address_of(&cuDeviceGetByPCIBusId)},
        {"cuDeviceGetMemPool", 11020, false, "cuDeviceGetMemPool", address_of(&cuDeviceGetMemPool)},
        {"cuDeviceGetP2PAttribute", 8000, false, "cuDeviceGetP2PAttribute",
         address_of(&cuDeviceGetP2PAttribute)},
        {"cuDeviceGetPCIBusId", 4010, false, "cuDeviceGetPCIBusId",
         address_of(&cuDeviceGetPCIBusId)},
        {"cuDeviceGetUuid", 9020, false, "cuDeviceGetUuid", address_of(&cuDeviceGetUuid)},
        {"cuDeviceGetUuid", 11040, false, "cuDeviceGetUuid_v2", address_of(&cuDeviceGetUuid_v2)},
        {"cuDeviceGraphMemTrim", 11040, false, "cuDeviceGraphMemTrim",
         address_of(&cuDeviceGraphMemTrim)},
        {"cuDevicePrimaryCtxGetState", 7000, false, "cuDevicePrimaryCtxGetState",
         address_of(&cuDevicePrimaryCtxGetState)},
        {"cuDevicePrimaryCtxReset", 7000, false, "cuDevicePrimaryCtxReset",
         address_of(&cuDevicePrimaryCtxReset)},
        {"cuDevicePrimaryCtxReset", 11000, false, "cuDevicePrimaryCtxReset_v2",
         address_of(&cuDevicePrimaryCtxReset_v2)},
        {"cuDevicePrimaryCtxSetFlags", 11000, false, "cuDevicePrimaryCtxSetFlags_v2",
         address_of(&cuDevicePrimaryCtxSetFlags_v2)},
        {"cuDeviceSetMemPool", 11020, false, "cuDeviceSetMemPool", address_of(&cuDeviceSetMemPool)},
        {"cuEventCreate", 2000, false, "cuEventCreate", address_of(&cuEventCreate)},
        {"cuEventDestroy", 4000, false, "cuEventDestroy_v2", address_of(&cuEventDestroy_v2)},
        {"cuEventElapsedTime", 2000, false, "cuEventElapsedTime", address_of(&cuEventElapsedTime)},
        {"cuEventElapsedTime", 12080, false, "cuEventElapsedTime_v2",
         address_of(&cuEventElapsedTime_v2)},
        {"cuEventQuery", 2000, false, "cuEventQuery", address_of(&cuEventQuery)},
        {"cuEventRecord", 2000, false, "cuEventRecord", address_of(&cuEventRecord)},
        {"cuEventRecordWithFlags", 11010, false, "cuEventRecordWithFlags",
         address_of(&cuEventRecordWithFlags)},
        {"cuEventRecordWithFlags", 11010, true, "cuEventRecordWithFlags_ptsz",
         address_of(&cuEventRecordWithFlags_ptsz)},
        {"cuEventRecord", 7000, true, "cuEventRecord_ptsz", address_of(&cuEventRecord_ptsz)},
        {"cuEventSynchronize", 2000, false, "cuEventSynchronize", address_of(&cuEventSynchronize)},
        {"cuExternalMemoryGetMappedBuffer", 10000, false, "cuExternalMemoryGetMappedBuffer",
         address_of(&cuExternalMemoryGetMappedBuffer)},
        {"cuFuncGetAttribute", 2020, false, "cuFuncGetAttribute", address_of(&cuFuncGetAttribute)},
        {"cuFuncGetName", 12030, false, "cuFuncGetName", address_of(&cuFuncGetName)},
        {"cuFuncSetAttribute", 9000, false, "cuFuncSetAttribute", address_of(&cuFuncSetAttribute)},
        {"cuFuncSetCacheConfig", 3000, false, "cuFuncSetCacheConfig",
         address_of(&cuFuncSetCacheConfig)},
        {"cuGraphAddEmptyNode", 10000, false, "cuGraphAddEmptyNode",
         address_of(&cuGraphAddEmptyNode)},
        {"cuGraphAddKernelNode", 12000, false, "cuGraphAddKernelNode_v2",
         address_of(&cuGraphAddKernelNode_v2)},
        {"cuGraphAddMemAllocNode", 11040, false, "cuGraphAddMemAllocNode",
         address_of(&cuGraphAddMemAllocNode)},
        {"cuGraphAddMemFreeNode", 11040, false, "cuGraphAddMemFreeNode",
         address_of(&cuGraphAddMemFreeNode)},
        {"cuGraphCreate", 10000, false, "cuGraphCreate", address_of(&cuGraphCreate)},
        {"cuGraphDestroy", 10000, false, "cuGraphDestroy", address_of(&cuGraphDestroy)},
        {"cuGraphDestroyNode", 10000, false, "cuGraphDestroyNode", address_of(&cuGraphDestroyNode)},
        {"cuGraphExecDestroy", 10000, false, "cuGraphExecDestroy", address_of(&cuGraphExecDestroy)},
        {"cuGraphGetNodes", 10000, false, "cuGraphGetNodes", address_of(&cuGraphGetNodes)},
        {"cuGraphInstantiateWithFlags", 11040, false, "cuGraphInstantiateWithFlags",
         address_of(&cuGraphInstantiateWithFlags)},
        {"cuGraphInstantiateWithParams", 12000, false, "cuGraphInstantiateWithParams",
         address_of(&cuGraphInstantiateWithParams)},
        {"cuGraphInstantiateWithParams", 12000, true, "cuGraphInstantiateWithParams_ptsz",
         address_of(&cuGraphInstantiateWithParams_ptsz)},
        {"cuGraphLaunch", 10000, false, "cuGraphLaunch", address_of(&cuGraphLaunch)},
        {"cuGraphLaunch", 10000, true, "cuGraphLaunch_ptsz", address_of(&cuGraphLaunch_ptsz)},
        {"cuGraphMemAllocNodeGetParams", 11040, false, "cuGraphMemAllocNodeGetParams",
         address_of(&cuGraphMemAllocNodeGetParams)},
        {"cuGraphMemFreeNodeGetParams", 11040, false, "cuGraphMemFreeNodeGetParams",
         address_of(&cuGraphMemFreeNodeGetParams)},
        {"cuGraphNodeGetType", 10000, false, "cuGraphNodeGetType", address_of(&cuGraphNodeGetType)},
        {"cuGraphUpload", 11010, false, "cuGraphUpload", address_of(&cuGraphUpload)},
        {"cuGraphUpload", 11010, true, "cuGraphUpload_ptsz", address_of(&cuGraphUpload_ptsz)},
        {"cuImportExternalMemory", 10000, false, "cuImportExternalMemory",
         address_of(&cuImportExternalMemory)},
        {"cuIpcCloseMemHandle", 4010, false, "cuIpcCloseMemHandle",
         address_of(&cuIpcCloseMemHandle)},
        {"cuIpcGetMemHandle", 4010, false, "cuIpcGetMemHandle", address_of(&cuIpcGetMemHandle)},
        {"cuIpcOpenMemHandle", 4010, false, "cuIpcOpenMemHandle", address_of(&cuIpcOpenMemHandle)},
        {"cuIpcOpenMemHandle", 11000, false, "cuIpcOpenMemHandle_v2",
         address_of(&cuIpcOpenMemHandle_v2)},
        {"cuKernelGetAttribute", 12000, false, "cuKernelGetAttribute",
         address_of(&cuKernelGetAttribute)},
        {"cuKernelGetFunction", 12000, false, "cuKernelGetFunction",
         address_of(&cuKernelGetFunction)},
        {"cuKernelGetName", 12030, false, "cuKernelGetName", address_of(&cuKernelGetName)},
        {"cuKernelSetAttribute", 12000, false, "cuKernelSetAttribute",
         address_of(&cuKernelSetAttribute)},
        {"cuKernelSetCacheConfig", 12000, false, "cuKernelSetCacheConfig",
         address_of(&cuKernelSetCacheConfig)},
        {"cuLaunchCooperativeKernel", 9000, false, "cuLaunchCooperativeKernel",
         address_of(&cuLaunchCooperativeKernel)},
        {"cuLaunchHostFunc", 10000, false, "cuLaunchHostFunc", address_of(&cuLaunchHostFunc)},
        {"cuLaunchHostFunc", 10000, true, "cuLaunchHostFunc_ptsz",
         address_of(&cuLaunchHostFunc_ptsz)},
        {"cuLaunchKernel", 4000, false, "cuLaunchKernel", address_of(&cuLaunchKernel)},
        {"cuLaunchKernelEx", 11060, false, "cuLaunchKernelEx", address_of(&cuLaunchKernelEx)},
        {"cuLaunchKernelEx", 11060, true, "cuLaunchKernelEx_ptsz",
         address_of(&cuLaunchKernelEx_ptsz)},
        {"cuLaunchKernel", 7000, true, "cuLaunchKernel_ptsz", address_of(&cuLaunchKernel_ptsz)},
        {"cuLibraryGetGlobal", 12000, false, "cuLibraryGetGlobal", address_of(&cuLibraryGetGlobal)},
        {"cuLibraryGetKernel", 12000, false, "cuLibraryGetKernel", address_of(&cuLibraryGetKernel)},
        {"cuLibraryGetManaged", 12000, false, "cuLibraryGetManaged",
         address_of(&cuLibraryGetManaged)},
        {"cuLibraryGetModule", 12000, false, "cuLibraryGetModule", address_of(&cuLibraryGetModule)},
        {"cuLibraryLoadData", 12000, false, "cuLibraryLoadData", address_of(&cuLibraryLoadData)},
        {"cuLibraryUnload", 12000, false, "cuLibraryUnload", address_of(&cuLibraryUnload)},
        {"cuMemGetAddressRange", 3020, false, "cuMemGetAddressRange_v2",
         address_of(&cuMemGetAddressRange_v2)},
        {"cuMemGetDefaultMemPool", 13000, false, "cuMemGetDefaultMemPool",
         address_of(&cuMemGetDefaultMemPool)},
        {"cuMemGetMemPool", 13000, false, "cuMemGetMemPool", address_of(&cuMemGetMemPool)},
        {"cuMemHostGetDevicePointer", 3020, false, "cuMemHostGetDevicePointer_v2",
         address_of(&cuMemHostGetDevicePointer_v2)},
        {"cuMemHostGetFlags", 2030, false, "cuMemHostGetFlags", address_of(&cuMemHostGetFlags)},
        {"cuMemHostRegister", 6050, false, "cuMemHostRegister_v2",
         address_of(&cuMemHostRegister_v2)},
        {"cuMemHostUnregister", 4000, false, "cuMemHostUnregister",
         address_of(&cuMemHostUnregister)},
        {"cuMemPoolExportPointer", 11020, false, "cuMemPoolExportPointer",
         address_of(&cuMemPoolExportPointer)},
        {"cuMemPoolGetAttribute", 11020, false, "cuMemPoolGetAttribute",
         address_of(&cuMemPoolGetAttribute)},
        {"cuMemPoolImportPointer", 11020, false, "cuMemPoolImportPointer",
         address_of(&cuMemPoolImportPointer)},
        {"cuMemPoolSetAccess", 11020, false, "cuMemPoolSetAccess", address_of(&cuMemPoolSetAccess)},
        {"cuMemPoolSetAttribute", 11020, false, "cuMemPoolSetAttribute",
         address_of(&cuMemPoolSetAttribute)},
        {"cuMemPoolTrimTo", 11020, false, "cuMemPoolTrimTo", address_of(&cuMemPoolTrimTo)},
        {"cuMemcpy", 4000, false, "cuMemcpy", address_of(&cuMemcpy)},
        {"cuMemcpy2DAsync", 3020, false, "cuMemcpy2DAsync_v2", address_of(&cuMemcpy2DAsync_v2)},
        {"cuMemcpy2DAsync", 7000, true, "cuMemcpy2DAsync_v2_ptsz",
         address_of(&cuMemcpy2DAsync_v2_ptsz)},
        {"cuMemcpy2DUnaligned", 3020, false, "cuMemcpy2DUnaligned_v2",
         address_of(&cuMemcpy2DUnaligned_v2)},
        {"cuMemcpy2DUnaligned", 7000, true, "cuMemcpy2DUnaligned_v2_ptds",
         address_of(&cuMemcpy2DUnaligned_v2_ptds)},
        {"cuMemcpy2D", 3020, false, "cuMemcpy2D_v2", address_of(&cuMemcpy2D_v2)},
        {"cuMemcpy2D", 7000, true, "cuMemcpy2D_v2_ptds", address_of(&cuMemcpy2D_v2_ptds)},
        {"cuMemcpy3DAsync", 3020, false, "cuMemcpy3DAsync_v2", address_of(&cuMemcpy3DAsync_v2)},
        {"cuMemcpy3DAsync", 7000, true, "cuMemcpy3DAsync_v2_ptsz",
         address_of(&cuMemcpy3DAsync_v2_ptsz)},
        {"cuMemcpy3D", 3020, false, "cuMemcpy3D_v2", address_of(&cuMemcpy3D_v2)},
        {"cuMemcpy3D", 7000, true, "cuMemcpy3D_v2_ptds", address_of(&cuMemcpy3D_v2_ptds)},
        {"cuMemcpyAsync", 4000, false, "cuMemcpyAsync", address_of(&cuMemcpyAsync)},
        {"cuMemcpyAsync", 7000, true, "cuMemcpyAsync_ptsz", address_of(&cuMemcpyAsync_ptsz)},
        {"cuMemcpyDtoDAsync", 3020, false, "cuMemcpyDtoDAsync_v2",
         address_of(&cuMemcpyDtoDAsync_v2)},
        {"cuMemcpyDtoDAsync", 7000, true, "cuMemcpyDtoDAsync_v2_ptsz",
         address_of(&cuMemcpyDtoDAsync_v2_ptsz)},
        {"cuMemcpyDtoD", 3020, false, "cuMemcpyDtoD_v2", address_of(&cuMemcpyDtoD_v2)},
        {"cuMemcpyDtoD", 7000, true, "cuMemcpyDtoD_v2_ptds", address_of(&cuMemcpyDtoD_v2_ptds)},
        {"cuMemcpyDtoHAsync", 3020, false, "cuMemcpyDtoHAsync_v2",
         address_of(&cuMemcpyDtoHAsync_v2)},
        {"cuMemcpyDtoHAsync", 7000, true, "cuMemcpyDtoHAsync_v2_ptsz",
         address_of(&cuMemcpyDtoHAsync_v2_ptsz)},
        {"cuMemcpyDtoH", 3020, false, "cuMemcpyDtoH_v2", address_of(&cuMemcpyDtoH_v2)},
        {"cuMemcpyDtoH", 7000, true, "cuMemcpyDtoH_v2_ptds", address_of(&cuMemcpyDtoH_v2_ptds)},
        {"cuMemcpyHtoDAsync", 3020, false, "cuMemcpyHtoDAsync_v2",
         address_of(&cuMemcpyHtoDAsync_v2)},
        {"cuMemcpyHtoDAsync", 7000, true, "cuMemcpyHtoDAsync_v2_ptsz",
         address_of(&cuMemcpyHtoDAsync_v2_ptsz)},
        {"cuMemcpyHtoD", 3020, false, "cuMemcpyHtoD_v2", address_of(&cuMemcpyHtoD_v2)},
        {"cuMemcpyHtoD", 7000, true, "cuMemcpyHtoD_v2_ptds", address_of(&cuMemcpyHtoD_v2_ptds)},
        {"cuMemcpy", 7000, true, "cuMemcpy_ptds", address_of(&cuMemcpy_ptds)},
        {"cuMemsetD2D32", 3020, false, "cuMemsetD2D32_v2", address_of(&cuMemsetD2D32_v2)},
        {"cuMemsetD2D32", 7000, true, "cuMemsetD2D32_v2_ptds", address_of(&cuMemsetD2D32_v2_ptds)},
        {"cuMemsetD2D8Async", 3020, false, "cuMemsetD2D8Async", address_of(&cuMemsetD2D8Async)},
        {"cuMemsetD2D8Async", 7000, true, "cuMemsetD2D8Async_ptsz",
         address_of(&cuMemsetD2D8Async_ptsz)},
        {"cuMemsetD2D8", 3020, false, "cuMemsetD2D8_v2", address_of(&cuMemsetD2D8_v2)},
        {"cuMemsetD2D8", 7000, true, "cuMemsetD2D8_v2_ptds", address_of(&cuMemsetD2D8_v2_ptds)},
        {"cuMemsetD32Async", 3020, false, "cuMemsetD32Async", address_of(&cuMemsetD32Async)},
        {"cuMemsetD32Async", 7000, true, "cuMemsetD32Async_ptsz",
         address_of(&cuMemsetD32Async_ptsz)},
        {"cuMemsetD32", 3020, false, "cuMemsetD32_v2", address_of(&cuMemsetD32_v2)},
        {"cuMemsetD32", 7000, true, "cuMemsetD32_v2_ptds", address_of(&cuMemsetD32_v2_ptds)},
        {"cuMemsetD8Async", 3020, false, "cuMemsetD8Async", address_of(&cuMemsetD8Async)},
        {"cuMemsetD8Async", 7000, true, "cuMemsetD8Async_ptsz", address_of(&cuMemsetD8Async_ptsz)},
        {"cuMemsetD8", 3020, false, "cuMemsetD8_v2", address_of(&cuMemsetD8_v2)},
        {"cuMemsetD8", 7000, true, "cuMemsetD8_v2_ptds", address_of(&cuMemsetD8_v2_ptds)},
        {"cuMipmappedArrayCreate", 5000, false, "cuMipmappedArrayCreate",
         address_of(&cuMipmappedArrayCreate)},
        {"cuMipmappedArrayDestroy", 5000, false, "cuMipmappedArrayDestroy",
         address_of(&cuMipmappedArrayDestroy)},
        {"cuMipmappedArrayGetLevel", 5000, false, "cuMipmappedArrayGetLevel",
         address_of(&cuMipmappedArrayGetLevel)},
        {"cuModuleGetFunction", 2000, false, "cuModuleGetFunction",
         address_of(&cuModuleGetFunction)},
        {"cuModuleGetGlobal", 3020, false, "cuModuleGetGlobal_v2",
         address_of(&cuModuleGetGlobal_v2)},
        {"cuModuleGetLoadingMode", 11070, false, "cuModuleGetLoadingMode",
         address_of(&cuModuleGetLoadingMode)},
        {"cuModuleLoadData", 2000, false, "cuModuleLoadData", address_of(&cuModuleLoadData)},
        {"cuModuleLoadDataEx", 2010, false, "cuModuleLoadDataEx", address_of(&cuModuleLoadDataEx)},
        {"cuModuleLoadFatBinary", 2000, false, "cuModuleLoadFatBinary",
         address_of(&cuModuleLoadFatBinary)},
        {"cuModuleUnload", 2000, false, "cuModuleUnload", address_of(&cuModuleUnload)},
        {"cuOccupancyAvailableDynamicSMemPerBlock", 10020, false,
         "cuOccupancyAvailableDynamicSMemPerBlock",
         address_of(&cuOccupancyAvailableDynamicSMemPerBlock)},
        {"cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000, false,
         "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
         address_of(&cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)},
        {"cuPointerGetAttribute", 4000, false, "cuPointerGetAttribute",
         address_of(&cuPointerGetAttribute)},
        {"cuPointerGetAttributes", 7000, false, "cuPointerGetAttributes",
         address_of(&cuPointerGetAttributes)},
        {"cuStreamAddCallback", 5000, false, "cuStreamAddCallback",
         address_of(&cuStreamAddCallback)},
        {"cuStreamAddCallback", 7000, true, "cuStreamAddCallback_ptsz",
         address_of(&cuStreamAddCallback_ptsz)},
        {"cuStreamBeginCapture", 10010, false, "cuStreamBeginCapture_v2",
         address_of(&cuStreamBeginCapture_v2)},
        {"cuStreamBeginCapture", 10010, true, "cuStreamBeginCapture_v2_ptsz",
         address_of(&cuStreamBeginCapture_v2_ptsz)},
        {"cuStreamCreate", 2000, false, "cuStreamCreate", address_of(&cuStreamCreate)},
        {"cuStreamCreateWithPriority", 5050, false, "cuStreamCreateWithPriority",
         address_of(&cuStreamCreateWithPriority)},
        {"cuStreamDestroy", 4000, false, "cuStreamDestroy_v2", address_of(&cuStreamDestroy_v2)},
        {"cuStreamEndCapture", 10000, false, "cuStreamEndCapture", address_of(&cuStreamEndCapture)},
        {"cuStreamEndCapture", 10000, true, "cuStreamEndCapture_ptsz",
         address_of(&cuStreamEndCapture_ptsz)},
        {"cuStreamGetAttribute", 11000, false, "cuStreamGetAttribute",
         address_of(&cuStreamGetAttribute)},
        {"cuStreamGetAttribute", 11000, true, "cuStreamGetAttribute_ptsz",
         address_of(&cuStreamGetAttribute_ptsz)},
        {"cuStreamGetCaptureInfo", 12030, false, "cuStreamGetCaptureInfo_v3",
         address_of(&cuStreamGetCaptureInfo_v3)},
        {"cuStreamGetCaptureInfo", 12030, true, "cuStreamGetCaptureInfo_v3_ptsz",
         address_of(&cuStreamGetCaptureInfo_v3_ptsz)},
        {"cuStreamGetCtx", 9020, false, "cuStreamGetCtx", address_of(&cuStreamGetCtx)},
        {"cuStreamGetDevice", 12080, false, "cuStreamGetDevice", address_of(&cuStreamGetDevice)},
        {"cuStreamGetDevice", 12080, true, "cuStreamGetDevice_ptsz",
         address_of(&cuStreamGetDevice_ptsz)},
        {"cuStreamGetFlags", 5050, false, "cuStreamGetFlags", address_of(&cuStreamGetFlags)},
        {"cuStreamGetFlags", 7000, true, "cuStreamGetFlags_ptsz",
         address_of(&cuStreamGetFlags_ptsz)},
        {"cuStreamGetId", 12000, false, "cuStreamGetId", address_of(&cuStreamGetId)},
        {"cuStreamGetId", 12000, true, "cuStreamGetId_ptsz", address_of(&cuStreamGetId_ptsz)},
        {"cuStreamGetPriority", 5050, false, "cuStreamGetPriority",
         address_of(&cuStreamGetPriority)},
        {"cuStreamGetPriority", 7000, true, "cuStreamGetPriority_ptsz",
         address_of(&cuStreamGetPriority_ptsz)},
        {"cuStreamQuery", 2000, false, "cuStreamQuery", address_of(&cuStreamQuery)},
        {"cuStreamQuery", 7000, true, "cuStreamQuery_ptsz", address_of(&cuStreamQuery_ptsz)},
        {"cuStreamSetAttribute", 11000, false, "cuStreamSetAttribute",
         address_of(&cuStreamSetAttribute)},
        {"cuStreamSetAttribute", 11000, true, "cuStreamSetAttribute_ptsz",
         address_of(&cuStreamSetAttribute_ptsz)},
        {"cuStreamSynchronize", 2000, false, "cuStreamSynchronize",
         address_of(&cuStreamSynchronize)},
        {"cuStreamSynchronize", 7000, true, "cuStreamSynchronize_ptsz",
         address_of(&cuStreamSynchronize_ptsz)},
        {"cuStreamWaitEvent", 3020, false, "cuStreamWaitEvent", address_of(&cuStreamWaitEvent)},
        {"cuStreamWaitEvent", 7000, true, "cuStreamWaitEvent_ptsz",
         address_of(&cuStreamWaitEvent_ptsz)},
        {"cuThreadExchangeStreamCaptureMode", 10010, false, "cuThreadExchangeStreamCaptureMode",
         address_of(&cuThreadExchangeStreamCaptureMode)},
        {"cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, false,
         "cuOccupancyMaxActiveBlocksPerMultiprocessor",
         address_of(&cuOccupancyMaxActiveBlocksPerMultiprocessor)},
        {"cuOccupancyMaxPotentialClusterSize", 11070, false, "cuOccupancyMaxPotentialClusterSize",
         address_of(&cuOccupancyMaxPotentialClusterSize)},
        {"cuOccupancyMaxActiveClusters", 11070, false, "cuOccupancyMaxActiveClusters",
         address_of(&cuOccupancyMaxActiveClusters)},
        {"cuStreamGetCaptureInfo", 10010, false, "cuStreamGetCaptureInfo",
         address_of(&cuStreamGetCaptureInfo)},
        {"cuStreamGetCaptureInfo", 10010, true, "cuStreamGetCaptureInfo_ptsz",
         address_of(&cuStreamGetCaptureInfo_ptsz)},
        {"cuStreamGetCaptureInfo", 11030, false, "cuStreamGetCaptureInfo_v2",
         address_of(&cuStreamGetCaptureInfo_v2)},
        {"cuStreamGetCaptureInfo", 11030, true, "cuStreamGetCaptureInfo_v2_ptsz",
         address_of(&cuStreamGetCaptureInfo_v2_ptsz)},
        {"cuGraphKernelNodeGetParams", 10000, false, "cuGraphKernelNodeGetParams",
         address_of(&cuGraphKernelNodeGetParams)},
        {"cuGraphKernelNodeGetParams", 12000, false, "cuGraphKernelNodeGetParams_v2",
         address_of(&cuGraphKernelNodeGetParams_v2)},
        {"cuGraphExecKernelNodeSetParams", 10010, false, "cuGraphExecKernelNodeSetParams",
         address_of(&cuGraphExecKernelNodeSetParams)},
        {"cuGraphExecKernelNodeSetParams", 12000, false, "cuGraphExecKernelNodeSetParams_v2",
         address_of(&cuGraphExecKernelNodeSetParams_v2)},
        {"cuGraphInstantiate", 10000, false, "cuGraphInstantiate", address_of(&cuGraphInstantiate)},
        {"cuGraphInstantiate", 11000, false, "cuGraphInstantiate_v2",
         address_of(&cuGraphInstantiate_v2)},
        {"cuStreamWaitValue32", 8000, false, "cuStreamWaitValue32",
         address_of(&cuStreamWaitValue32)},
        {"cuStreamWaitValue32", 8000, true, "cuStreamWaitValue32_ptsz",
         address_of(&cuStreamWaitValue32_ptsz)},
        {"cuStreamWaitValue32", 11070, false, "cuStreamWaitValue32_v2",
         address_of(&cuStreamWaitValue32_v2)},
        {"cuStreamWriteValue32", 8000, false, "cuStreamWriteValue32",
         address_of(&cuStreamWriteValue32)},
        {"cuStreamWriteValue32", 8000, true, "cuStreamWriteValue32_ptsz",
         address_of(&cuStreamWriteValue32_ptsz)},
        {"cuStreamWriteValue32", 11070, false, "cuStreamWriteValue32_v2",
         address_of(&cuStreamWriteValue32_v2)},
        {"cuStreamBatchMemOp", 8000, false, "cuStreamBatchMemOp", address_of(&cuStreamBatchMemOp)},
        {"cuStreamBatchMemOp", 8000, true, "cuStreamBatchMemOp_ptsz",
         address_of(&cuStreamBatchMemOp_ptsz)},
        {"cuStreamBatchMemOp", 11070, false, "cuStreamBatchMemOp_v2",
         address_of(&cuStreamBatchMemOp_v2)},
        {"cuMemPrefetchAsync", 8000, false, "cuMemPrefetchAsync", address_of(&cuMemPrefetchAsync)},
        {"cuMemPrefetchAsync", 8000, true, "cuMemPrefetchAsync_ptsz",
         address_of(&cuMemPrefetchAsync_ptsz)},
        {"cuMemPrefetchAsync", 12020, false, "cuMemPrefetchAsync_v2",
         address_of(&cuMemPrefetchAsync_v2)},
        {"cuKernelGetLibrary", 12050, false, "cuKernelGetLibrary", address_of(&cuKernelGetLibrary)},
        {"cuTensorMapEncodeTiled", 12000, false, "cuTensorMapEncodeTiled",
         address_of(&cuTensorMapEncodeTiled)},
        {"cuLinkCreate", 6050, false, "cuLinkCreate_v2", address_of(&cuLinkCreate_v2)},
        {"cuLinkAddData", 6050, false, "cuLinkAddData_v2", address_of(&cuLinkAddData_v2)},
        {"cuLinkAddFile", 6050, false, "cuLinkAddFile_v2", address_of(&cuLinkAddFile_v2)},
        {"cuLinkComplete", 5050, false, "cuLinkComplete", address_of(&cuLinkComplete)},
        {"cuLinkDestroy", 5050, false, "cuLinkDestroy", address_of(&cuLinkDestroy)},
        {"cuGetProcAddress", 11030, false, "resolver_self_v1", address_of(&self_resolver_v1)},
        {"cuGetProcAddress", 12000, false, "resolver_self_v2", address_of(&self_resolver_v2)},
    };
    return table;
}

struct Answer {
    CUresult rc;
    CUdriverProcAddressQueryResult status;
    const Route* route; // null unless rc is CUDA_SUCCESS
};

Answer look_up(std::string_view name, int version, cuuint64_t flags) {
    const bool per_thread = flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    bool known = false;
    const Route* best = nullptr;
    for (const Route& r : routes()) {
        if (r.base != name) continue;
        known = true;
        if (r.since > version || (r.per_thread && !per_thread)) continue;
        // Newest ABI wins; at equal age the per-thread twin wins (it is only eligible when asked
        // for).
        if (best == nullptr || r.since > best->since || (r.since == best->since && r.per_thread))
            best = &r;
    }
    if (!known) return {CUDA_ERROR_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, nullptr};
    if (best == nullptr)
        return {CUDA_ERROR_NOT_FOUND, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, nullptr};
    return {CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, best};
}

const char* status_name(CUdriverProcAddressQueryResult status) {
    switch (status) {
    case CU_GET_PROC_ADDRESS_SUCCESS:
        return "SUCCESS";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND:
        return "SYMBOL_NOT_FOUND";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
        return "VERSION_NOT_SUFFICIENT";
    default:
        return "?";
    }
}

} // namespace

extern "C" {
// hidden_thunks.S: kHiddenThunks jumps of 16 bytes each, thunk i through target i.
__attribute__((visibility("hidden"))) extern const unsigned char fakecuda_hidden_thunks[];
__attribute__((visibility("hidden"))) void* fakecuda_hidden_targets[512];
}

namespace {

constexpr size_t kHiddenThunks = 512;
constexpr size_t kHiddenThunkBytes = 16;

// The exported function, or under FAKECUDA_HIDDEN_POINTERS=1 a thunk to it that no exported name
// covers (as the real driver's answers): a tracer must route by the name asked, not by dladdr().
void* address_to_give(const Route& route) {
#if defined(__x86_64__)
    if (fakecuda::config().hidden_pointers) {
        const size_t index = static_cast<size_t>(&route - routes().data());
        if (index >= kHiddenThunks) {
            std::fprintf(stderr, "fakecuda: more routes than hidden thunks (hidden_thunks.S)\n");
            std::abort();
        }
        __atomic_store_n(&fakecuda_hidden_targets[index], route.fn, __ATOMIC_RELEASE);
        return const_cast<unsigned char*>(fakecuda_hidden_thunks + index * kHiddenThunkBytes);
    }
#endif
    return route.fn;
}

// The behaviour shared by all four resolvers; only the counter (and so the log name) differs.
CUresult answer(const Call& call, const char* symbol, void** pfn, int version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* symbolStatus) {
    const auto flag_bits = static_cast<unsigned long long>(flags);
    constexpr cuuint64_t kKnownFlags =
        CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    // Argument errors leave *symbolStatus alone: no search took place.
    if (symbol == nullptr || pfn == nullptr || (flags & ~kKnownFlags) != 0 ||
        version > CUDA_VERSION) {
        if (pfn != nullptr) *pfn = nullptr;
        return call.done(CUDA_ERROR_INVALID_VALUE, "symbol=\"%s\", cudaVersion=%d, flags=%llu",
                         symbol != nullptr ? symbol : "(null)", version, flag_bits);
    }
    const Answer a = look_up(symbol, version, flags);
    *pfn = a.route != nullptr ? address_to_give(*a.route) : nullptr;
    if (symbolStatus != nullptr) *symbolStatus = a.status;
    const std::string_view resolved =
        a.route != nullptr ? a.route->symbol : std::string_view{"NULL"};
    return call.done(a.rc, "symbol=\"%s\", cudaVersion=%d, flags=%llu, *pfn=%.*s, *symbolStatus=%s",
                     symbol, version, flag_bits, static_cast<int>(resolved.size()), resolved.data(),
                     status_name(a.status));
}

CUresult self_resolver_v1(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
    const Call call{call_id("resolver_self_v1")};
    return answer(call, symbol, pfn, cudaVersion, flags, nullptr);
}

CUresult self_resolver_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* symbolStatus) {
    const Call call{call_id("resolver_self_v2")};
    return answer(call, symbol, pfn, cudaVersion, flags, symbolStatus);
}

} // namespace

extern "C" void* fakecuda_unhide(void* fn) {
#if defined(__x86_64__)
    const auto* at = static_cast<const unsigned char*>(fn);
    if (at >= fakecuda_hidden_thunks &&
        at < fakecuda_hidden_thunks + kHiddenThunks * kHiddenThunkBytes &&
        (at - fakecuda_hidden_thunks) % kHiddenThunkBytes == 0) {
        void* target = __atomic_load_n(
            &fakecuda_hidden_targets[(at - fakecuda_hidden_thunks) / kHiddenThunkBytes],
            __ATOMIC_ACQUIRE);
        if (target != nullptr) return target;
    }
#endif
    return fn;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
    const Call call{call_id("cuGetProcAddress")};
    return answer(call, symbol, pfn, cudaVersion, flags, nullptr);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
    const Call call{call_id("cuGetProcAddress_v2")};
    return answer(call, symbol, pfn, cudaVersion, flags, symbolStatus);
}
