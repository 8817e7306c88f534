/* path_getproc: interception paths 4 and 5, the driver's own resolvers. The program dlsym()s both
 * cuGetProcAddress_v2 (5 arguments, CUDA 12+) and cuGetProcAddress (4 arguments, CUDA 11.3),
 * resolves base names with ABI versions and flags, and allocates through every pointer it gets. It
 * also takes the self-query answers ("cuGetProcAddress" at 12000 and 11030) and resolves through
 * those, as cudart 13 does.
 *
 * Ground truth (device 0):
 *   getproc_legacy_transient        legacy cuMemAlloc (2000)       4000009 dev  legacy cuMemFree
 *       -> the 32-bit legacy ABI: a tracer passes it through UNRECORDED (tests/apps/EXPECTED.md)
 *   getproc_v2_device_leak          v2   cuMemAlloc/3020           4000001 dev  leaked
 *   getproc_v2_device_transient     v2   cuMemAlloc/3020           4000002 dev  v2 cuMemFree/3020
 *   getproc_v2_async_transient      v2   cuMemAllocAsync/11020 f0  4000003 dev  v2 cuMemFreeAsync
 * f0 getproc_v2_async_ptsz_leak      v2   cuMemAllocAsync/11020 f2  4000004 dev  leaked
 *   getproc_v1_device_leak          v1   cuMemAlloc/3020           4000005 dev  leaked
 *   getproc_v1_device_transient     v1   cuMemAlloc/3020           4000006 dev  v1 cuMemFree/3020
 *   getproc_v1_async_leak           v1   cuMemAllocAsync/11020 f0  4000007 dev  leaked
 *   getproc_v1_async_ptsz_transient v1   cuMemAllocAsync/11020 f2  4000008 dev  v1 cuMemFreeAsync
 * f2 getproc_self_device_leak        self-v2 cuMemAlloc/3020        4000010 dev  leaked
 *   getproc_self_transient          self-v2 cuMemAlloc/3020        4000011 dev  self-v1
 * cuMemFree/3020 Recorded totals: 10 allocations (dev), 5 frees. Live at end: 5 blocks, 20000027
 * bytes. Device peak: 24000038 (the five leaks plus getproc_self_transient). The legacy pair runs
 * first, so it cannot move the peak whether or not it is recorded.
 *
 * It also checks the answers a tracer must pass through unchanged: unknown name -> NOT_FOUND +
 * SYMBOL_NOT_FOUND + NULL; version too old -> NOT_FOUND + VERSION_NOT_SUFFICIENT; version above the
 * driver's -> INVALID_VALUE; the probe ("", 0, 0) -> NOT_FOUND. */
#include "app_check.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stddef.h>

/* cudaTypedefs.h declares the pre-3.2 pointer types only for NVIDIA's internal build. */
typedef CUresult (*LegacyAllocFn)(unsigned int* dptr, unsigned int bytesize);
typedef CUresult (*LegacyFreeFn)(unsigned int dptr);

typedef PFN_cuGetProcAddress_v12000 ResolverV2;
typedef PFN_cuGetProcAddress_v11030 ResolverV1;

struct Allocator {
    PFN_cuMemAlloc_v3020 alloc;
    PFN_cuMemFree_v3020 free;
    PFN_cuMemAllocAsync_v11020 alloc_async;
    PFN_cuMemFreeAsync_v11020 free_async;
    PFN_cuMemAllocAsync_v11020_ptsz alloc_async_ptsz;
    PFN_cuMemFreeAsync_v11020_ptsz free_async_ptsz;
};

static void* via_v2(ResolverV2 resolve, const char* name, int version, cuuint64_t flags,
                    const char* expected) {
    void* fn = NULL;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    APP_OK(resolve(name, &fn, version, flags, &status));
    APP_CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS, "%s/%d: status %d", name, version,
              (int)status);
    app_expect_resolved(fn, expected);
    return fn;
}

static void* via_v1(ResolverV1 resolve, const char* name, int version, cuuint64_t flags,
                    const char* expected) {
    void* fn = NULL;
    APP_OK(resolve(name, &fn, version, flags));
    app_expect_resolved(fn, expected);
    return fn;
}

static struct Allocator resolve_all_v2(ResolverV2 r) {
    struct Allocator a;
    a.alloc = (PFN_cuMemAlloc_v3020)via_v2(r, "cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    a.free = (PFN_cuMemFree_v3020)via_v2(r, "cuMemFree", 3020, 0, "cuMemFree_v2");
    a.alloc_async =
        (PFN_cuMemAllocAsync_v11020)via_v2(r, "cuMemAllocAsync", 11020, 0, "cuMemAllocAsync");
    a.free_async =
        (PFN_cuMemFreeAsync_v11020)via_v2(r, "cuMemFreeAsync", 11020, 0, "cuMemFreeAsync");
    a.alloc_async_ptsz = (PFN_cuMemAllocAsync_v11020_ptsz)via_v2(
        r, "cuMemAllocAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
        "cuMemAllocAsync_ptsz");
    a.free_async_ptsz = (PFN_cuMemFreeAsync_v11020_ptsz)via_v2(
        r, "cuMemFreeAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
        "cuMemFreeAsync_ptsz");
    return a;
}

static struct Allocator resolve_all_v1(ResolverV1 r) {
    struct Allocator a;
    a.alloc = (PFN_cuMemAlloc_v3020)via_v1(r, "cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    a.free = (PFN_cuMemFree_v3020)via_v1(r, "cuMemFree", 3020, 0, "cuMemFree_v2");
    a.alloc_async =
        (PFN_cuMemAllocAsync_v11020)via_v1(r, "cuMemAllocAsync", 11020, 0, "cuMemAllocAsync");
    a.free_async =
        (PFN_cuMemFreeAsync_v11020)via_v1(r, "cuMemFreeAsync", 11020, 0, "cuMemFreeAsync");
    a.alloc_async_ptsz = (PFN_cuMemAllocAsync_v11020_ptsz)via_v1(
        r, "cuMemAllocAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
        "cuMemAllocAsync_ptsz");
    a.free_async_ptsz = (PFN_cuMemFreeAsync_v11020_ptsz)via_v1(
        r, "cuMemFreeAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
        "cuMemFreeAsync_ptsz");
    return a;
}

static void check_pass_through_answers(ResolverV2 resolve) {
    void* fn = (void*)&resolve; /* any non-NULL value: the driver must overwrite it */
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    APP_EXPECT_RC(resolve("cuNoSuchFunction", &fn, 12000, 0, &status), CUDA_ERROR_NOT_FOUND);
    APP_CHECK(fn == NULL && status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
              "unknown name: pfn %p, status %d", fn, (int)status);

    fn = (void*)&resolve;
    APP_EXPECT_RC(resolve("cuMemAllocAsync", &fn, 11000, 0, &status), CUDA_ERROR_NOT_FOUND);
    APP_CHECK(fn == NULL && status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
              "version too old: pfn %p, status %d", fn, (int)status);

    APP_EXPECT_RC(resolve("cuMemAlloc", &fn, 99000, 0, &status), CUDA_ERROR_INVALID_VALUE);
    APP_CHECK(fn == NULL, "version above the driver's: pfn %p", fn);

    APP_EXPECT_RC(resolve("", &fn, 0, 0, &status), CUDA_ERROR_NOT_FOUND);
}

__attribute__((noinline)) void getproc_legacy_transient(ResolverV1 resolve) {
    void* alloc = NULL;
    void* release = NULL;
    APP_OK(resolve("cuMemAlloc", &alloc, 2000, 0));
    APP_OK(resolve("cuMemFree", &release, 2000, 0));
    app_expect_resolved_in(alloc, "cuMemAlloc", "libcuda.so.1");
    app_expect_resolved_in(release, "cuMemFree", "libcuda.so.1");
    unsigned int p = 0;
    APP_OK(((LegacyAllocFn)alloc)(&p, 4000009));
    APP_OK(((LegacyFreeFn)release)(p));
}

__attribute__((noinline)) CUdeviceptr getproc_v2_device_leak(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc(&p, 4000001));
    return p;
}

__attribute__((noinline)) void getproc_v2_device_transient(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc(&p, 4000002));
    APP_OK(a->free(p));
}

__attribute__((noinline)) void getproc_v2_async_transient(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc_async(&p, 4000003, NULL));
    APP_OK(a->free_async(p, NULL));
}

__attribute__((noinline)) CUdeviceptr getproc_v2_async_ptsz_leak(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc_async_ptsz(&p, 4000004, CU_STREAM_PER_THREAD));
    return p;
}

__attribute__((noinline)) CUdeviceptr getproc_v1_device_leak(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc(&p, 4000005));
    return p;
}

__attribute__((noinline)) void getproc_v1_device_transient(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc(&p, 4000006));
    APP_OK(a->free(p));
}

__attribute__((noinline)) CUdeviceptr getproc_v1_async_leak(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc_async(&p, 4000007, NULL));
    return p;
}

__attribute__((noinline)) void getproc_v1_async_ptsz_transient(const struct Allocator* a) {
    CUdeviceptr p = 0;
    APP_OK(a->alloc_async_ptsz(&p, 4000008, CU_STREAM_PER_THREAD));
    APP_OK(a->free_async_ptsz(p, CU_STREAM_PER_THREAD));
}

__attribute__((noinline)) CUdeviceptr getproc_self_device_leak(PFN_cuMemAlloc_v3020 alloc) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 4000010));
    return p;
}

__attribute__((noinline)) void getproc_self_transient(PFN_cuMemAlloc_v3020 alloc,
                                                      PFN_cuMemFree_v3020 release) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 4000011));
    APP_OK(release(p));
}

int main(void) {
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    APP_CHECK(libcuda != NULL, "dlopen(libcuda.so.1) failed: %s", dlerror());
    const ResolverV2 v2 = (ResolverV2)dlsym(libcuda, "cuGetProcAddress_v2");
    const ResolverV1 v1 = (ResolverV1)dlsym(libcuda, "cuGetProcAddress");
    app_expect_resolved((void*)v2, "cuGetProcAddress_v2");
    app_expect_resolved((void*)v1, "cuGetProcAddress");

    check_pass_through_answers(v2);
    void* init = NULL;
    APP_OK(v2("cuInit", &init, 2000, 0, NULL));
    app_expect_resolved_any(init, "cuInit");
    APP_OK(((PFN_cuInit_v2000)init)(0));

    getproc_legacy_transient(v1);

    const struct Allocator by_v2 = resolve_all_v2(v2);
    getproc_v2_device_leak(&by_v2);
    getproc_v2_device_transient(&by_v2);
    getproc_v2_async_transient(&by_v2);
    getproc_v2_async_ptsz_leak(&by_v2);

    const struct Allocator by_v1 = resolve_all_v1(v1);
    getproc_v1_device_leak(&by_v1);
    getproc_v1_device_transient(&by_v1);
    getproc_v1_async_leak(&by_v1);
    getproc_v1_async_ptsz_transient(&by_v1);

    /* The self-query answers are not exported functions, so no symbol name can be checked. */
    const ResolverV2 self_v2 = (ResolverV2)via_v2(v2, "cuGetProcAddress", 12000, 0, NULL);
    const ResolverV1 self_v1 = (ResolverV1)via_v2(v2, "cuGetProcAddress", 11030, 0, NULL);
    APP_CHECK((void*)self_v2 != (void*)v2 && (void*)self_v1 != (void*)v1 &&
                  (void*)self_v1 != (void*)self_v2,
              "self-query answers are not distinct resolvers");
    const PFN_cuMemAlloc_v3020 self_alloc =
        (PFN_cuMemAlloc_v3020)via_v2(self_v2, "cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    const PFN_cuMemFree_v3020 self_free =
        (PFN_cuMemFree_v3020)via_v1(self_v1, "cuMemFree", 3020, 0, "cuMemFree_v2");
    getproc_self_device_leak(self_alloc);
    getproc_self_transient(self_alloc, self_free);

    app_expect_calls("cuMemAlloc", 1);
    app_expect_calls("cuMemFree", 1);
    app_expect_calls("cuMemAlloc_v2", 6);
    app_expect_calls("cuMemFree_v2", 3);
    app_expect_calls("cuMemAllocAsync", 2);
    app_expect_calls("cuMemFreeAsync", 1);
    app_expect_calls("cuMemAllocAsync_ptsz", 2);
    app_expect_calls("cuMemFreeAsync_ptsz", 1);
    app_expect_device_used(0, 20000027);
    app_expect_device_peak(0, 24000038);
    /* cuInit and the legacy cuMemAlloc pass through any tracer untouched: under the switch they
     * are the driver's hidden thunks, which proves the switch reached this program. */
    if (app_hidden_pointers())
        APP_CHECK(app_hidden_thunks_seen() > 0, "FAKECUDA_HIDDEN_POINTERS=1 but no hidden answer");
    return 0;
}
