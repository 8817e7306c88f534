// The C halves of the dlsym and dlopen entry points in dl_trampolines.S, and dlclose.
#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "hooks/driver_impls.h"
#include "hooks/real_symbols.h"
#include "hooks/runtime_hooks.h"
#include "recorder/unwinder.h"
#include "session/config.h"
#include "support/log.h"

namespace {
using DlopenFn = void* (*)(const char*, int);
using DlcloseFn = int (*)(void*);

DlcloseFn real_dlclose() {
    static std::atomic<DlcloseFn> real{nullptr};
    DlcloseFn fn = real.load(std::memory_order_acquire);
    if (fn) return fn;
    fn = reinterpret_cast<DlcloseFn>(gpuleak::hooks::next_glibc_symbol("dlclose"));
    if (!fn)
        if (auto dl = gpuleak::hooks::real_dlsym())
            fn = reinterpret_cast<DlcloseFn>(dl(RTLD_NEXT, "dlclose"));
    real.store(fn, std::memory_order_release);
    return fn;
}
} // namespace

extern "C" {

__attribute__((visibility("hidden"))) std::atomic<DlopenFn> gpuleak_real_dlopen{nullptr};

// dlsym(handle, name) for a real handle. The caller is still the application's (we were jumped to).
__attribute__((visibility("hidden"), noinline)) void* gpuleak_dlsym_handle(void* handle,
                                                                           const char* name) {
    void* caller = __builtin_return_address(0);
    auto dl = gpuleak::hooks::real_dlsym();
    if (!dl) return nullptr;
    void* real = dl(handle, name);
    if (!real || !name || name[0] != 'c' || name[1] != 'u') return real;
    // Only driver functions, and never for libcuda's own lookups (WSL2's libcuda dlsyms itself:
    // HAMi-core PR #326).
    if (!gpuleak::hooks::in_libcuda(real) || gpuleak::hooks::in_libcuda(caller)) return real;
    return gpuleak::hooks::route_driver_symbol(name, real);
}

// 1 if dlsym(RTLD_DEFAULT, name) would find only our export: the application must see NULL then,
// exactly as without the preload (pitfall 13).
__attribute__((visibility("hidden"))) int gpuleak_dlsym_default_hidden(const char* name) {
    if (!name || name[0] != 'c' || name[1] != 'u') return 0;
    return gpuleak::hooks::driver_export_without_definition(name) ||
           gpuleak::hooks::runtime_export_without_definition(name);
}

__attribute__((visibility("hidden"))) int gpuleak_dlopen_flags(int flags) {
    if (!gpuleak_real_dlopen.load(std::memory_order_acquire)) {
        auto fn = reinterpret_cast<DlopenFn>(gpuleak::hooks::next_glibc_symbol("dlopen"));
        gpuleak_real_dlopen.store(fn, std::memory_order_release);
    }
    // RTLD_DEEPBIND makes a library bind to its own dependencies first, bypassing every hook
    // (as heaptrack does, we clear it; GPULEAK_KEEP_DEEPBIND=1 keeps it).
    if ((flags & RTLD_DEEPBIND) && !gpuleak::keep_deepbind()) {
        static std::atomic<bool> noted{false};
        if (!noted.exchange(true))
            gpuleak::log::info(
                "cleared RTLD_DEEPBIND on dlopen so CUDA calls from that library stay visible");
        flags &= ~RTLD_DEEPBIND;
    }
    return flags;
}

// A library unloaded here may be replaced by another at the same addresses before the writer
// thread's next module check: the threads' cached frame rules are dropped now, so no walk reads a
// new library's frames with the old one's rules. dlclose does not depend on its caller, so a C
// wrapper is enough.
__attribute__((visibility("default"))) int dlclose(void* handle) {
    DlcloseFn fn = real_dlclose();
    if (!fn) return -1;
    int rc = fn(handle);
    gpuleak::unwinder::modules_changed();
    return rc;
}

} // extern "C"
