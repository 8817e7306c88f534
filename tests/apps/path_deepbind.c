/* path_deepbind: escape path 9. The program dlopen()s libdeepbind_user.so with RTLD_DEEPBIND; that
 * library dlopen()s libcuda, dlsym()s cuMemAlloc_v2 and allocates. Its allocations are seen only if
 * the tracer's dlopen hook clears RTLD_DEEPBIND (DEEPBIND makes the library's own dlsym reference
 * bind to libc's before the preload's).
 *
 * Ground truth (device 0; both sites are in libdeepbind_user.so):
 *   deepbind_device_leak       cuMemAlloc_v2 8000001 dev leaked
 *   deepbind_device_transient  cuMemAlloc_v2 8000002 dev cuMemFree_v2
 * Totals: 2 allocations (dev), 1 free. Live at end: 1 block, 8000001 bytes. Device peak: 16000003.
 */
#include "app_check.h"
#include "deepbind/deepbind_user.h"

#include <dlfcn.h>
#include <stddef.h>

int main(void) {
    /* Found through this program's RUNPATH, as a plugin would be. */
    void* lib = dlopen("libdeepbind_user.so", RTLD_NOW | RTLD_DEEPBIND);
    APP_CHECK(lib != NULL, "dlopen(libdeepbind_user.so, RTLD_DEEPBIND) failed: %s", dlerror());
    __typeof__(deepbind_run)* run = (__typeof__(deepbind_run)*)dlsym(lib, "deepbind_run");
    APP_CHECK(run != NULL, "dlsym(deepbind_run) failed: %s", dlerror());
    run();

    app_expect_calls("cuMemAlloc_v2", 2);
    app_expect_calls("cuMemFree_v2", 1);
    app_expect_device_used(0, 8000001);
    app_expect_device_peak(0, 16000003);
    return 0;
}
