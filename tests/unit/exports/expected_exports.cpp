// Prints the dynamic symbols libgpuleak.so must define, one a line: every entry of the hook lists
// (preload/hooks/hook_list.h) and the exports that are not hooks. check_exports.cmake compares
// them with the library's: a hook that libgpuleak.map's patterns do not export, or an export that
// is no hook, fails the test.
#include <cstdio>
#include <initializer_list>

#include "hooks/hook_list.h"

int main() {
#define GPULEAK_PRINT(sym, ...) std::puts(#sym);
    GPULEAK_DRIVER_HOOKS(GPULEAK_PRINT)
    GPULEAK_RUNTIME_HOOKS(GPULEAK_PRINT)
#undef GPULEAK_PRINT
    // dl_trampolines.S and dl_hooks.cpp, runtime_hooks.cpp's entry-point queries, the marker API,
    // the NVTX injection.
    for (const char* name :
         {"dlsym", "dlopen", "dlclose", "cudaGetDriverEntryPoint", "cudaGetDriverEntryPoint_ptsz",
          "cudaGetDriverEntryPointByVersion", "cudaGetDriverEntryPointByVersion_ptsz",
          "gpuleak_mark_iteration", "InitializeInjectionNvtx2"})
        std::puts(name);
    return 0;
}
