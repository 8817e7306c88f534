/* path_rtld: interception path 3, the pseudo-handles.
 *
 * RTLD_NEXT: liba and libb both define which(); liba asks dlsym(RTLD_NEXT, "which") and must get
 * libb's. A dlsym hook that forwards with an ordinary call makes itself the caller, and the lookup
 * then starts after the hook's library instead of after liba (glibc resolves RTLD_NEXT from the
 * caller's return address; preload/hooks/dl_trampolines.S keeps the application the caller). Exit
 * status 3, with the module printed, when RTLD_NEXT resolves anywhere but libb.
 *
 * RTLD_DEFAULT: libcuda is dlopen()ed RTLD_GLOBAL and its functions are looked up in the global
 * scope, where a preload's exported wrappers come first.
 *
 * Ground truth (device 0):
 *   rtld_device_leak       cuMemAlloc_v2 3000001 dev leaked
 *   rtld_device_transient  cuMemAlloc_v2 3000002 dev cuMemFree_v2
 * Totals: 2 allocations (dev), 1 free. Live at end: 1 block, 3000001 bytes. Device peak: 6000003.
 */
#include "app_check.h"
#include "rtld/rtld_libs.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*InitFn)(unsigned int);
typedef CUresult (*AllocFn)(CUdeviceptr*, size_t);
typedef CUresult (*FreeFn)(CUdeviceptr);

static AllocFn cu_alloc;
static FreeFn cu_free;

static void check_rtld_next(void) {
    const WhichFn next = which_next();
    Dl_info info = {0};
    const char* module =
        next != NULL && dladdr((void*)next, &info) != 0 ? info.dli_fname : "(nothing)";
    if (next == NULL || next() != 'b' || strstr(module, "libb") == NULL) {
        fprintf(stderr, "path_rtld: dlsym(RTLD_NEXT, \"which\") from liba resolved to %s\n",
                module);
        exit(3);
    }
}

/* wrapped: an allocation entry point, which a tracer must hand back wrapped. */
static void* global_lookup(const char* name, int wrapped) {
    void* fn = dlsym(RTLD_DEFAULT, name);
    APP_CHECK(fn != NULL, "dlsym(RTLD_DEFAULT, %s) failed: %s", name, dlerror());
    if (wrapped)
        app_expect_resolved(fn, name);
    else
        app_expect_resolved_any(fn, name);
    return fn;
}

__attribute__((noinline)) CUdeviceptr rtld_device_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cu_alloc(&p, 3000001));
    return p;
}

__attribute__((noinline)) void rtld_device_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cu_alloc(&p, 3000002));
    APP_OK(cu_free(p));
}

int main(void) {
    check_rtld_next();

    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    APP_CHECK(libcuda != NULL, "dlopen(libcuda.so.1) failed: %s", dlerror());
    const InitFn init = (InitFn)global_lookup("cuInit", 0);
    cu_alloc = (AllocFn)global_lookup("cuMemAlloc_v2", 1);
    cu_free = (FreeFn)global_lookup("cuMemFree_v2", 1);

    APP_OK(init(0));
    rtld_device_leak();
    rtld_device_transient();

    app_expect_calls("cuMemAlloc_v2", 2);
    app_expect_calls("cuMemFree_v2", 1);
    app_expect_device_used(0, 3000001);
    app_expect_device_peak(0, 6000003);
    return 0;
}
