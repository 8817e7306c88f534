// The names fakecuda_calls() can count: every exported driver entry point plus the two
// non-exported resolvers handed out by the ("cuGetProcAddress", 11030 | 12000) self-query.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace fakecuda {

inline constexpr auto kCallNames = std::to_array<std::string_view>({
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxGetDevice",
    "cuCtxGetDevice_v2",
    "cuDevicePrimaryCtxRetain",
    "cuGetErrorString",
    "cuGetErrorName",
    "cuGetExportTable",
    "cuStreamIsCapturing",
    "cuStreamIsCapturing_ptsz",
    "cuMemGetInfo",
    "cuMemGetInfo_v2",
    "cuMemAlloc",
    "cuMemAlloc_v2",
    "cuMemAllocPitch",
    "cuMemAllocPitch_v2",
    "cuMemAllocManaged",
    "cuMemFree",
    "cuMemFree_v2",
    "cuMemAllocHost",
    "cuMemAllocHost_v2",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemAllocAsync",
    "cuMemAllocAsync_ptsz",
    "cuMemAllocFromPoolAsync",
    "cuMemAllocFromPoolAsync_ptsz",
    "cuMemFreeAsync",
    "cuMemFreeAsync_ptsz",
    "cuDeviceGetDefaultMemPool",
    "cuMemPoolCreate",
    "cuMemPoolDestroy",
    "cuMemCreate",
    "cuMemRelease",
    "cuMemRetainAllocationHandle",
    "cuMemAddressReserve",
    "cuMemAddressFree",
    "cuMemMap",
    "cuMemUnmap",
    "cuMemSetAccess",
    "cuMemGetAllocationGranularity",
    "cuGetProcAddress",
    "cuGetProcAddress_v2",
    "resolver_self_v1",
    "resolver_self_v2",
    "cuDevicePrimaryCtxRelease",
    "cuDevicePrimaryCtxRelease_v2",
    "cuDeviceGetName",
    "cuDeviceTotalMem_v2",
});

// consteval, so a misspelt name in an entry point is a compile error rather than a silent -1.
consteval std::size_t call_id(std::string_view name) {
    for (std::size_t i = 0; i < kCallNames.size(); ++i)
        if (kCallNames[i] == name) return i;
    throw "fakecuda: name missing from kCallNames";
}

} // namespace fakecuda
