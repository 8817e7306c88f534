/* path_entry_point: interception path 6, cudaGetDriverEntryPoint[ByVersion][_ptsz] (PyTorch's
 * driver_api.cpp, NCCL's cudawrap.cc). The runtime answers these through the resolver it stored
 * from the ("cuGetProcAddress", 12000) self-query, so a tracer that wrapped that resolver hands the
 * program its wrappers here too. The _ptsz entry point comes from path_entry_point_ptsz.c.
 *
 * Ground truth (device 0):
 *   entry_byversion_leak     ByVersion("cuMemAlloc", 12000, default)                 7000001 dev
 * leaked entry_default_transient  ByVersion cuMemAlloc + GetDriverEntryPoint("cuMemFree")  7000002
 * dev freed entry_async_ptsz_leak    ByVersion("cuMemAllocAsync", 12000, per-thread) [_ptsz]
 * 7000003 dev leaked entry_async_transient GetDriverEntryPoint("cuMemAllocAsync"/"cuMemFreeAsync",
 * legacy stream) 7000004 dev freed entry_ptsz_default_leak
 * ByVersion_ptsz("cuMemAllocFromPoolAsync", 12000, default) [_ptsz] 7000005 dev leaked Totals: 5
 * allocations (dev), 2 frees. Live at end: 3 blocks, 21000009 bytes. Device peak: 21000009 (the
 * three leaks). Also checked: an unknown name gives cudaSuccess, a NULL pointer and
 * cudaDriverEntryPointSymbolNotFound; a version above the driver's gives cudaErrorInvalidValue. */
#include "app_check.h"
#include "path_entry_point_ptsz.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

static void* by_version(const char* name, unsigned version, unsigned long long flags,
                        const char* expected) {
    void* fn = NULL;
    enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    APP_OK(cudaGetDriverEntryPointByVersion(name, &fn, version, flags, &status));
    APP_CHECK(status == cudaDriverEntryPointSuccess, "%s: status %d", name, (int)status);
    app_expect_resolved(fn, expected);
    return fn;
}

/* cudaGetDriverEntryPoint is deprecated in CUDA 13 but still what older framework code calls. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void* unversioned(const char* name, unsigned long long flags, const char* expected) {
    void* fn = NULL;
    enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    APP_OK(cudaGetDriverEntryPoint(name, &fn, flags, &status));
    APP_CHECK(status == cudaDriverEntryPointSuccess, "%s: status %d", name, (int)status);
    app_expect_resolved(fn, expected);
    return fn;
}
#pragma GCC diagnostic pop

__attribute__((noinline)) CUdeviceptr entry_byversion_leak(PFN_cuMemAlloc_v3020 alloc) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 7000001));
    return p;
}

__attribute__((noinline)) void entry_default_transient(PFN_cuMemAlloc_v3020 alloc,
                                                       PFN_cuMemFree_v3020 release) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 7000002));
    APP_OK(release(p));
}

__attribute__((noinline)) CUdeviceptr entry_async_ptsz_leak(PFN_cuMemAllocAsync_v11020_ptsz alloc) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 7000003, CU_STREAM_PER_THREAD));
    return p;
}

__attribute__((noinline)) void entry_async_transient(PFN_cuMemAllocAsync_v11020 alloc,
                                                     PFN_cuMemFreeAsync_v11020 release) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 7000004, NULL));
    APP_OK(release(p, NULL));
}

static void check_pass_through_answers(void) {
    void* fn = (void*)&fn;
    enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
    APP_OK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 12000, cudaEnableDefault,
                                            &status));
    APP_CHECK(fn == NULL && status == cudaDriverEntryPointSymbolNotFound,
              "unknown name: fn %p, status %d", fn, (int)status);
    APP_EXPECT_RC(
        cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 99000, cudaEnableDefault, &status),
        cudaErrorInvalidValue);
    APP_EXPECT_RC(cudaGetLastError(), cudaErrorInvalidValue);
}

int main(void) {
    check_pass_through_answers();

    const PFN_cuMemAlloc_v3020 alloc =
        (PFN_cuMemAlloc_v3020)by_version("cuMemAlloc", 12000, cudaEnableDefault, "cuMemAlloc_v2");
    const PFN_cuMemFree_v3020 release =
        (PFN_cuMemFree_v3020)unversioned("cuMemFree", cudaEnableDefault, "cuMemFree_v2");
    entry_byversion_leak(alloc);
    entry_default_transient(alloc, release);

    entry_async_ptsz_leak((PFN_cuMemAllocAsync_v11020_ptsz)by_version(
        "cuMemAllocAsync", 12000, cudaEnablePerThreadDefaultStream, "cuMemAllocAsync_ptsz"));
    entry_async_transient((PFN_cuMemAllocAsync_v11020)unversioned(
                              "cuMemAllocAsync", cudaEnableLegacyStream, "cuMemAllocAsync"),
                          (PFN_cuMemFreeAsync_v11020)unversioned(
                              "cuMemFreeAsync", cudaEnableLegacyStream, "cuMemFreeAsync"));
    entry_ptsz_default_leak();

    app_expect_calls("cuMemAlloc_v2", 2);
    app_expect_calls("cuMemFree_v2", 1);
    app_expect_calls("cuMemAllocAsync_ptsz", 1);
    app_expect_calls("cuMemAllocAsync", 1);
    app_expect_calls("cuMemFreeAsync", 1);
    app_expect_calls("cuMemAllocFromPoolAsync_ptsz", 1);
    app_expect_device_used(0, 21000009);
    app_expect_device_peak(0, 21000009);
    return 0;
}
