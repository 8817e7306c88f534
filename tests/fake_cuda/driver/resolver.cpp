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
    *pfn = a.route != nullptr ? a.route->fn : nullptr;
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

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
    const Call call{call_id("cuGetProcAddress")};
    return answer(call, symbol, pfn, cudaVersion, flags, nullptr);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
    const Call call{call_id("cuGetProcAddress_v2")};
    return answer(call, symbol, pfn, cudaVersion, flags, symbolStatus);
}
