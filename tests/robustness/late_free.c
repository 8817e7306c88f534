/* late_free: frees during exit, on both sides of the preload's own destructor. liblate_free.so
 * allocates 3000003 bytes in its constructor and frees them in its destructor, which runs after the
 * preload's (the trace has then already been finished once); main allocates 4000004 bytes that an
 * atexit handler frees (before any library destructor). Both frees must be in the trace.
 *
 * Ground truth: 2 allocations, 2 frees, nothing live at the end. */
#include "app_check.h"

#include <cuda.h>
#include <stdlib.h>

static CUdeviceptr g_second;

static void free_at_exit(void) {
    APP_OK(cuMemFree(g_second));
}

int main(void) {
    APP_OK(cuInit(0));
    APP_OK(cuMemAlloc(&g_second, 4000004));
    atexit(free_at_exit);
    return 0;
}
