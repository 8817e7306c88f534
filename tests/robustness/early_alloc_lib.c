/* libearly_alloc.so: allocates from its constructor, which runs before main and possibly before
 * any constructor of a preloaded library. */
#include "app_check.h"

#include <cuda.h>

__attribute__((noinline)) void early_library_alloc(void) {
    CUdeviceptr p = 0;
    APP_OK(cuInit(0));
    APP_OK(cuMemAlloc(&p, 777777));
}

__attribute__((constructor)) static void allocate_at_load(void) {
    early_library_alloc();
}
