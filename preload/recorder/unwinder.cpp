#include "recorder/unwinder.h"

#include <dlfcn.h>

#include "hooks/real_symbols.h"
#include "support/log.h"

namespace gpuleak::unwinder {
namespace {

using BacktraceFn = int (*)(void**, int);
using SetCachingFn = int (*)(void*, int);
BacktraceFn g_backtrace = nullptr;
constexpr int kUnwCachePerThread = 2; // UNW_CACHE_PER_THREAD

} // namespace

bool init() {
    if (g_backtrace) return true;
    void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        log::warn(
            "libunwind.so.8 not found ({}); recording without native stacks. Install libunwind8.",
            dlerror());
        return false;
    }
    auto dl = hooks::real_dlsym();
    auto bt = reinterpret_cast<BacktraceFn>(dl(lib, "unw_backtrace"));
    auto set_caching = reinterpret_cast<SetCachingFn>(dl(lib, "_ULx86_64_set_caching_policy"));
    void* local_space = dl(lib, "_ULx86_64_local_addr_space");
    if (!bt) {
        log::warn("libunwind.so.8 has no unw_backtrace; recording without native stacks");
        return false;
    }
    // Per-thread caches: unwinding never takes a lock shared with other threads.
    if (set_caching && local_space)
        set_caching(*static_cast<void**>(local_space), kUnwCachePerThread);
    void* prime[8];
    bt(prime, 8);
    g_backtrace = bt;
    return true;
}

int backtrace(uint64_t* frames, int max) {
    return g_backtrace ? g_backtrace(reinterpret_cast<void**>(frames), max) : 0;
}

} // namespace gpuleak::unwinder
