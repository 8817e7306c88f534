#include "recorder/unwinder.h"

#include <dlfcn.h>

#include <atomic>

#include "hooks/real_symbols.h"
#include "session/config.h"
#include "support/log.h"

namespace gpuleak::unwinder {

namespace detail {
__thread unwind::WalkContext t_walk __attribute__((tls_model("initial-exec")));
} // namespace detail

namespace {

using SetCachingFn = int (*)(void*, int);
using FlushCacheFn = void (*)(void*, uint64_t, uint64_t);
constexpr int kUnwCachePerThread = 2; // UNW_CACHE_PER_THREAD
bool g_loaded = false;
// unw_flush_cache and libunwind's local address space: libunwind keeps what it read of a module's
// tables by address until told that modules changed (it does not look for itself).
std::atomic<FlushCacheFn> g_flush_cache{nullptr};
void* g_local_space = nullptr;

} // namespace

bool init() {
    if (g_loaded) return true;
    void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        log::warn("libunwind.so.8 not found ({}); a stack the unwind tables alone cannot walk (a "
                  "signal handler's) is recorded without native frames. Install libunwind8.",
                  dlerror());
        return false;
    }
    auto dl = hooks::real_dlsym();
    auto bt = reinterpret_cast<unwind::BacktraceFn>(dl(lib, "unw_backtrace"));
    auto set_caching = reinterpret_cast<SetCachingFn>(dl(lib, "_ULx86_64_set_caching_policy"));
    void* local_space = dl(lib, "_ULx86_64_local_addr_space");
    if (!bt) {
        log::warn("libunwind.so.8 has no unw_backtrace; a stack the unwind tables alone cannot "
                  "walk is recorded without native frames");
        return false;
    }
    // Per-thread caches: unwinding never takes a lock shared with other threads.
    if (set_caching && local_space)
        set_caching(*static_cast<void**>(local_space), kUnwCachePerThread);
    if (local_space) {
        g_local_space = *static_cast<void**>(local_space);
        // One function for every address space, the local one included.
        g_flush_cache.store(reinterpret_cast<FlushCacheFn>(dl(lib, "_Ux86_64_flush_cache")),
                            std::memory_order_release);
    }
    void* prime[8];
    bt(prime, 8);
    gpuleak_unwind_fallback = bt;
    g_loaded = true;
    return true;
}

void attach_thread(unwind::RuleCache* cache, unwind::WalkMemo* memo) {
    unwind::WalkContext& walk = detail::t_walk;
    walk.cache = nullptr;
    walk.memo = nullptr;
    if (!cache || !config().fast_unwind) return;
    if (!unwind::current_stack_bounds(walk.stack_low, walk.stack_high)) return;
    walk.cache = cache;
    // The previous walk was another thread's, on another stack.
    if (memo) memo->reset();
    walk.memo = memo;
}

void modules_changed() {
    unwind::invalidate_rule_caches();
    if (FlushCacheFn flush = g_flush_cache.load(std::memory_order_acquire))
        flush(g_local_space, 0, 0);
}

} // namespace gpuleak::unwinder
