/* path_dlsym: interception path 2. The program does not link libcuda; it dlopen()s it and
 * dlsym()s the exact ABI names, as XLA's cuda_stub.cc, CuPy's soft link and ctypes users do.
 *
 * Ground truth (device 0):
 *   dlsym_device_leak          cuMemAlloc_v2         2000001 dev     leaked
 *   dlsym_device_transient     cuMemAlloc_v2         2000002 dev     cuMemFree_v2
 *   dlsym_managed_transient    cuMemAllocManaged     2000003 managed cuMemFree_v2
 *   dlsym_pinned_leak          cuMemHostAlloc        2000004 pinned  leaked
 *   dlsym_async_ptsz_leak      cuMemAllocAsync_ptsz  2000005 dev     leaked
 *   dlsym_async_ptsz_transient cuMemAllocAsync_ptsz  2000006 dev     cuMemFreeAsync_ptsz
 * Totals: 6 allocations (4 dev, 1 managed, 1 pinned), 3 frees (2 dev, 1 managed).
 * Live at end: dev 2 blocks, 4000006 bytes; managed 0; pinned 2000004.
 * Device peak: 6000012 (both leaks plus dlsym_async_ptsz_transient). */
#include "app_check.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stddef.h>

typedef CUresult (*InitFn)(unsigned int);
typedef CUresult (*AllocFn)(CUdeviceptr*, size_t);
typedef CUresult (*FreeFn)(CUdeviceptr);
typedef CUresult (*AllocManagedFn)(CUdeviceptr*, size_t, unsigned int);
typedef CUresult (*HostAllocFn)(void**, size_t, unsigned int);
typedef CUresult (*AllocAsyncFn)(CUdeviceptr*, size_t, CUstream);
typedef CUresult (*FreeAsyncFn)(CUdeviceptr, CUstream);

static struct {
    InitFn init;
    AllocFn alloc;
    FreeFn free;
    AllocManagedFn alloc_managed;
    HostAllocFn host_alloc;
    AllocAsyncFn alloc_async_ptsz;
    FreeAsyncFn free_async_ptsz;
} cu;

/* wrapped: an allocation entry point, which a tracer must hand back wrapped. */
static void* lookup(void* libcuda, const char* name, int wrapped) {
    void* fn = dlsym(libcuda, name);
    APP_CHECK(fn != NULL, "dlsym(libcuda, %s) failed: %s", name, dlerror());
    if (wrapped)
        app_expect_resolved(fn, name);
    else
        app_expect_resolved_any(fn, name);
    return fn;
}

__attribute__((noinline)) CUdeviceptr dlsym_device_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cu.alloc(&p, 2000001));
    return p;
}

__attribute__((noinline)) void dlsym_device_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cu.alloc(&p, 2000002));
    APP_OK(cu.free(p));
}

__attribute__((noinline)) void dlsym_managed_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cu.alloc_managed(&p, 2000003, CU_MEM_ATTACH_GLOBAL));
    APP_OK(cu.free(p));
}

__attribute__((noinline)) void* dlsym_pinned_leak(void) {
    void* p = NULL;
    APP_OK(cu.host_alloc(&p, 2000004, 0));
    return p;
}

__attribute__((noinline)) CUdeviceptr dlsym_async_ptsz_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cu.alloc_async_ptsz(&p, 2000005, CU_STREAM_PER_THREAD));
    return p;
}

__attribute__((noinline)) void dlsym_async_ptsz_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cu.alloc_async_ptsz(&p, 2000006, CU_STREAM_PER_THREAD));
    APP_OK(cu.free_async_ptsz(p, CU_STREAM_PER_THREAD));
}

int main(void) {
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    APP_CHECK(libcuda != NULL, "dlopen(libcuda.so.1) failed: %s", dlerror());
    cu.init = (InitFn)lookup(libcuda, "cuInit", 0);
    cu.alloc = (AllocFn)lookup(libcuda, "cuMemAlloc_v2", 1);
    cu.free = (FreeFn)lookup(libcuda, "cuMemFree_v2", 1);
    cu.alloc_managed = (AllocManagedFn)lookup(libcuda, "cuMemAllocManaged", 1);
    cu.host_alloc = (HostAllocFn)lookup(libcuda, "cuMemHostAlloc", 1);
    cu.alloc_async_ptsz = (AllocAsyncFn)lookup(libcuda, "cuMemAllocAsync_ptsz", 1);
    cu.free_async_ptsz = (FreeAsyncFn)lookup(libcuda, "cuMemFreeAsync_ptsz", 1);

    APP_OK(cu.init(0));
    dlsym_device_leak();
    dlsym_device_transient();
    dlsym_managed_transient();
    dlsym_pinned_leak();
    dlsym_async_ptsz_leak();
    dlsym_async_ptsz_transient();

    app_expect_calls("cuMemAlloc_v2", 2);
    app_expect_calls("cuMemFree_v2", 2);
    app_expect_calls("cuMemAllocManaged", 1);
    app_expect_calls("cuMemHostAlloc", 1);
    app_expect_calls("cuMemAllocAsync_ptsz", 2);
    app_expect_calls("cuMemFreeAsync_ptsz", 1);
    app_expect_calls("cuMemAllocAsync", 0);
    app_expect_device_used(0, 4000006);
    app_expect_device_peak(0, 6000012);
    app_expect_managed_used(0);
    app_expect_pinned_used(2000004);
    return 0;
}
