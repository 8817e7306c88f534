#include "hooks/real_symbols.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>

namespace gpuleak::hooks {
namespace {

bool basename_starts_with(const char* path, const char* prefix) {
    if (!path) return false;
    const char* slash = std::strrchr(path, '/');
    const char* base = slash ? slash + 1 : path;
    return std::strncmp(base, prefix, std::strlen(prefix)) == 0;
}

const void* self_base() {
    static const void* base = [] {
        Dl_info info{};
        dladdr(reinterpret_cast<const void*>(&self_base), &info);
        return static_cast<const void*>(info.dli_fbase);
    }();
    return base;
}

} // namespace

extern "C" {
// Read by dl_trampolines.S as a plain pointer.
__attribute__((visibility("hidden"))) std::atomic<DlsymFn> gpuleak_real_dlsym{nullptr};
}

extern "C" __attribute__((visibility("hidden"))) DlsymFn gpuleak_resolve_real_dlsym() {
    DlsymFn fn = gpuleak_real_dlsym.load(std::memory_order_acquire);
    if (fn) return fn;
    fn = reinterpret_cast<DlsymFn>(gpuleak::hooks::next_glibc_symbol("dlsym"));
    gpuleak_real_dlsym.store(fn, std::memory_order_release);
    return fn;
}

void* next_glibc_symbol(const char* name) {
    for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"})
        if (void* p = dlvsym(RTLD_NEXT, name, version)) return p;
    return nullptr;
}

DlsymFn real_dlsym() {
    return gpuleak_resolve_real_dlsym();
}

void* next_definition(const char* name, const char* library_prefix) {
    DlsymFn dl = real_dlsym();
    if (!dl) return nullptr;
    if (void* p = dl(RTLD_NEXT, name)) return p;
    // Not in the global scope: e.g. libcudart loaded as a dependency of a RTLD_LOCAL library, whose
    // calls still bind to our export first. Look for the library among everything loaded.
    struct Search {
        const char* prefix;
        char path[4096];
    } search{library_prefix, {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            if (!basename_starts_with(info->dlpi_name, s->prefix)) return 0;
            std::strncpy(s->path, info->dlpi_name, sizeof s->path - 1);
            return 1;
        },
        &search);
    if (!search.path[0]) return nullptr;
    void* handle = dlopen(search.path, RTLD_NOLOAD | RTLD_LAZY);
    if (!handle) return nullptr;
    void* p = dl(handle, name);
    // The library stays loaded by its owner; our NOLOAD reference is kept so it cannot vanish
    // under a pointer we cached (cuinterpose does the same).
    return p;
}

bool in_libcuda(const void* address) {
    Dl_info info{};
    return address && dladdr(address, &info) && basename_starts_with(info.dli_fname, "libcuda.so");
}

bool in_self(const void* address) {
    Dl_info info{};
    return address && dladdr(address, &info) && info.dli_fbase == self_base();
}

} // namespace gpuleak::hooks
