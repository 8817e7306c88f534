/* module_swap: a library is unloaded and another is loaded at the same address, and both allocate
 * from a function at the same offset whose stack frames differ in size (module_swap_lib.c). A
 * tracer that keeps frame rules by return address must drop them when the first library goes:
 * within microseconds, long before any periodic check of the loaded modules.
 *
 * Ground truth: ROUNDS allocations of 4096 bytes from libmodule_swap_a.so and ROUNDS of 8192 bytes
 * from libmodule_swap_b.so, each freed by main. Exit status 77 (and a line saying why) where the
 * loader put b elsewhere: then the program shows nothing. */
#include "app_check.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

enum { ROUNDS = 50 };

typedef CUresult (*swap_alloc_fn)(CUdeviceptr*, size_t);

static uintptr_t allocate_from(const char* library, size_t bytes, int close_after) {
    void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    APP_CHECK(h != NULL, "dlopen %s: %s", library, dlerror());
    swap_alloc_fn swap_alloc = (swap_alloc_fn)dlsym(h, "swap_alloc");
    APP_CHECK(swap_alloc != NULL, "dlsym swap_alloc in %s: %s", library, dlerror());
    Dl_info info;
    APP_CHECK(dladdr((void*)swap_alloc, &info) != 0, "dladdr in %s failed", library);
    for (int i = 0; i < ROUNDS; ++i) {
        CUdeviceptr p = 0;
        APP_OK(swap_alloc(&p, bytes));
        APP_OK(cuMemFree_v2(p));
    }
    if (close_after) APP_CHECK(dlclose(h) == 0, "dlclose %s: %s", library, dlerror());
    return (uintptr_t)info.dli_fbase;
}

int main(void) {
    APP_OK(cuInit(0));
    uintptr_t base_a = allocate_from("libmodule_swap_a.so", 4096, 1);
    APP_CHECK(dlopen("libmodule_swap_a.so", RTLD_NOW | RTLD_NOLOAD) == NULL,
              "libmodule_swap_a.so is still loaded after dlclose");
    /* Where b lands is known only once it is loaded and used. */
    uintptr_t base_b = allocate_from("libmodule_swap_b.so", 8192, 0);
    if (base_a != base_b) {
        printf("module_swap: libmodule_swap_b.so was loaded at %#lx, not where a was (%#lx): "
               "nothing shown\n",
               (unsigned long)base_b, (unsigned long)base_a);
        return 77;
    }
    printf("module_swap: both libraries at %#lx\n", (unsigned long)base_a);
    app_expect_calls("cuMemAlloc_v2", 2 * ROUNDS);
    app_expect_calls("cuMemFree_v2", 2 * ROUNDS);
    return 0;
}
