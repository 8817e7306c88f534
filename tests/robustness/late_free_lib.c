/* liblate_free.so: allocates a buffer in its constructor and frees it in its destructor. A linked
 * library's destructors run after the preload's (libraries are finalized in the reverse order of
 * their initialization, and an LD_PRELOAD library is initialized after the program's dependencies).
 * Allocating before main also initializes the fake driver's state early enough to still be alive
 * then: state first touched during main would be destroyed with main's atexit handlers, before any
 * library destructor. */
#include "app_check.h"

#include <cuda.h>

static CUdeviceptr g_buffer;

__attribute__((noinline)) void late_free_library_alloc(void) {
    APP_OK(cuInit(0));
    APP_OK(cuMemAlloc(&g_buffer, 3000003));
}

__attribute__((constructor)) static void allocate_at_load(void) {
    late_free_library_alloc();
}

__attribute__((destructor)) static void free_at_unload(void) {
    APP_OK(cuMemFree(g_buffer));
}
