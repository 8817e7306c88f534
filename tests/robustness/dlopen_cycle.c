/* dlopen_cycle: libcuda.so.1 opened, used and closed three times (RTLD_LOCAL, by file name through
 * the RUNPATH), as plugin loaders do. Each round resolves cuMemAlloc_v2 / cuMemFree_v2 with dlsym,
 * allocates 1000001 * (round + 1) bytes and frees it, then allocates 5000005 bytes and keeps it.
 * Whether the library really leaves memory on dlclose is up to the loader (a tracer may hold it);
 * every call must be recorded either way.
 *
 * Ground truth: 6 allocations, 3 frees; live at end: 3 blocks of 5000005 bytes (as the trace sees
 * them: if the library was unloaded, the fake's own accounting was lost with it). */
#include "app_check.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*alloc_fn)(CUdeviceptr*, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);

__attribute__((noinline)) static void cycle_round(int round) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    APP_CHECK(h != NULL, "dlopen libcuda.so.1: %s", dlerror());
    init_fn init = (init_fn)dlsym(h, "cuInit");
    alloc_fn alloc = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
    free_fn release = (free_fn)dlsym(h, "cuMemFree_v2");
    APP_CHECK(init && alloc && release, "dlsym failed: %s", dlerror());
    APP_OK(init(0));
    CUdeviceptr p = 0, kept = 0;
    APP_OK(alloc(&p, 1000001 * (size_t)(round + 1)));
    APP_OK(release(p));
    APP_OK(alloc(&kept, 5000005));
    APP_CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
    printf("round %d: libcuda %s after dlclose\n", round,
           app_module_loaded("libcuda.so.1") ? "still loaded" : "unloaded");
}

int main(void) {
    for (int round = 0; round < 3; ++round)
        cycle_round(round);
    return 0;
}
