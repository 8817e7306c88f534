/* The library path_deepbind loads with RTLD_DEEPBIND. With DEEPBIND, this library's own reference
 * to dlsym binds to libc's before any preload's, so a tracer that only hooks dlsym never sees these
 * lookups unless it clears RTLD_DEEPBIND in its dlopen hook (escape path 9 of
 * tests/apps/EXPECTED.md). */
#include "deepbind_user.h"

#include "app_check.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stddef.h>

typedef CUresult (*InitFn)(unsigned int);
typedef CUresult (*AllocFn)(CUdeviceptr*, size_t);
typedef CUresult (*FreeFn)(CUdeviceptr);

static AllocFn cu_alloc;
static FreeFn cu_free;

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

__attribute__((noinline)) CUdeviceptr deepbind_device_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cu_alloc(&p, 8000001));
    return p;
}

__attribute__((noinline)) void deepbind_device_transient(void) {
    CUdeviceptr p = 0;
    APP_OK(cu_alloc(&p, 8000002));
    APP_OK(cu_free(p));
}

void deepbind_run(void) {
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    APP_CHECK(libcuda != NULL, "dlopen(libcuda.so.1) failed: %s", dlerror());
    const InitFn init = (InitFn)lookup(libcuda, "cuInit", 0);
    cu_alloc = (AllocFn)lookup(libcuda, "cuMemAlloc_v2", 1);
    cu_free = (FreeFn)lookup(libcuda, "cuMemFree_v2", 1);
    APP_OK(init(0));
    deepbind_device_leak();
    deepbind_device_transient();
}
