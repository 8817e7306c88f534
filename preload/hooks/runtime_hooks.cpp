// Runtime API exports. They record nothing themselves: the allocation is recorded once, at the
// driver call it makes; these only tag that record with the runtime API's name. They are reached
// only through a dynamic libcudart (a static one binds internally), which is why the driver hooks
// are the ones that count.
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <type_traits>

#include "hooks/cuda_api.h"
#include "hooks/driver_impls.h"
#include "hooks/real_symbols.h"
#include "hooks/reentry.h"
#include "hooks/runtime_hooks.h"

#define GPULEAK_EXPORT extern "C" __attribute__((visibility("default")))

using namespace gpuleak::cuda; // the exports below are declared at global scope, in CUDA's names

namespace gpuleak::hooks {

__thread bool t_in_hook __attribute__((tls_model("initial-exec"))) = false;
__thread format::Api t_runtime_api __attribute__((tls_model("initial-exec"))) =
    format::Api::Unknown;

namespace {

class ApiTag {
public:
    explicit ApiTag(format::Api api) : previous_(t_runtime_api) { t_runtime_api = api; }
    ~ApiTag() { t_runtime_api = previous_; }
    ApiTag(const ApiTag&) = delete;
    ApiTag& operator=(const ApiTag&) = delete;

private:
    format::Api previous_;
};

void* runtime_real(std::atomic<void*>& cache, const char* symbol) {
    void* p = cache.load(std::memory_order_acquire);
    if (p) return p;
    p = next_definition(symbol, "libcudart");
    if (p && in_self(p)) p = nullptr;
    if (p) cache.store(p, std::memory_order_release);
    return p;
}

} // namespace

namespace {
#define GPULEAK_RT_CACHE(sym, tag, params, args) std::atomic<void*> g_real_##sym{nullptr};
GPULEAK_RUNTIME_HOOKS(GPULEAK_RT_CACHE)
#undef GPULEAK_RT_CACHE
std::atomic<void*> g_real_entry[4];
constexpr const char* kEntryNames[4] = {"cudaGetDriverEntryPoint", "cudaGetDriverEntryPoint_ptsz",
                                        "cudaGetDriverEntryPointByVersion",
                                        "cudaGetDriverEntryPointByVersion_ptsz"};
} // namespace

bool runtime_export_without_definition(const char* symbol) {
#define GPULEAK_RT_CHECK(sym, tag, params, args)                                                   \
    if (!std::strcmp(symbol, #sym)) return !runtime_real(g_real_##sym, #sym);
    GPULEAK_RUNTIME_HOOKS(GPULEAK_RT_CHECK)
#undef GPULEAK_RT_CHECK
    for (int i = 0; i < 4; ++i)
        if (!std::strcmp(symbol, kEntryNames[i]))
            return !runtime_real(g_real_entry[i], kEntryNames[i]);
    return false;
}

namespace {

// The runtime's entry-point queries use its (already wrapped) resolver, so their results are
// normally ours already; this catches a runtime that kept an unwrapped resolver. `status` is read
// only when the runtime that answered has that parameter (12.0+); null otherwise.
cudaError_t route_entry_point(cudaError_t r, const char* symbol, void** fn, int version,
                              unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
    if (r == cudaSuccess && fn && *fn && symbol &&
        (!status || *status == cudaDriverEntryPointSuccess) && in_libcuda(*fn))
        *fn = route_driver_pointer(symbol, version, flags, *fn);
    return r;
}

// CUDA 12+ declare cudaGetDriverEntryPoint[_ptsz](symbol, fn, flags, status); 11.3-11.8 have no
// `status`, so for their callers the fourth argument register holds whatever it held. Every call
// forwards all four registers (an 11.x runtime ignores the fourth, as it would without us), and
// `status` is dereferenced only when the runtime that defines the function is 12.0 or newer.
using EntryFn = PFN_cudaGetDriverEntryPoint;
using EntryByVersionFn = PFN_cudaGetDriverEntryPointByVersion;

// The version of the libcudart that holds `fn`, from that library's own cudaRuntimeGetVersion
// (which answers a constant without initializing the runtime); 0 when it cannot be told.
int runtime_version_of(void* fn) {
    Dl_info info{};
    if (!dladdr(fn, &info) || !info.dli_fname) return 0;
    void* handle = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
    if (!handle) return 0;
    auto get =
        reinterpret_cast<PFN_cudaRuntimeGetVersion>(real_dlsym()(handle, "cudaRuntimeGetVersion"));
    int version = 0;
    if (!get || get(&version) != cudaSuccess) version = 0;
    dlclose(handle);
    return version;
}

std::atomic<int>
    g_entry_runtime_version[2]; // per unversioned export; 0 = not asked yet, -1 = unknown

cudaError_t entry_point(int which, const char* symbol, void** fn, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* status) {
    void* p = runtime_real(g_real_entry[which], kEntryNames[which]);
    if (!p) return cudaErrorInitializationError;
    int version = g_entry_runtime_version[which].load(std::memory_order_acquire);
    if (version == 0) {
        version = runtime_version_of(p);
        if (version <= 0) version = -1;
        g_entry_runtime_version[which].store(version, std::memory_order_release);
    }
    cudaError_t r = reinterpret_cast<EntryFn>(p)(symbol, fn, flags, status);
    // Unknown version: never read `status`; *fn is NULL whenever the symbol was not found anyway.
    return route_entry_point(r, symbol, fn, version > 0 ? version : 0, flags,
                             version >= 12000 ? status : nullptr);
}

cudaError_t entry_point_by_version(int which, const char* symbol, void** fn, unsigned int version,
                                   unsigned long long flags,
                                   cudaDriverEntryPointQueryResult* status) {
    auto real =
        reinterpret_cast<EntryByVersionFn>(runtime_real(g_real_entry[which], kEntryNames[which]));
    if (!real) return cudaErrorInitializationError;
    return route_entry_point(real(symbol, fn, version, flags, status), symbol, fn,
                             static_cast<int>(version), flags, status);
}

} // namespace
} // namespace gpuleak::hooks

#define GPULEAK_RT_EXPORT(sym, tag, params, args)                                                  \
    GPULEAK_EXPORT cudaError_t sym params {                                                        \
        auto real = reinterpret_cast<PFN_##sym>(                                                   \
            gpuleak::hooks::runtime_real(gpuleak::hooks::g_real_##sym, #sym));                     \
        if (!real) return cudaErrorInitializationError;                                            \
        gpuleak::hooks::ApiTag scope(gpuleak::format::Api::tag);                                   \
        return real args;                                                                          \
    }
GPULEAK_RUNTIME_HOOKS(GPULEAK_RT_EXPORT)
#undef GPULEAK_RT_EXPORT

GPULEAK_EXPORT cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** fn,
                                                   unsigned long long flags,
                                                   cudaDriverEntryPointQueryResult* status) {
    return gpuleak::hooks::entry_point(0, symbol, fn, flags, status);
}
GPULEAK_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** fn,
                                                        unsigned long long flags,
                                                        cudaDriverEntryPointQueryResult* status) {
    return gpuleak::hooks::entry_point(1, symbol, fn, flags, status);
}
GPULEAK_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(
    const char* symbol, void** fn, unsigned int version, unsigned long long flags,
    cudaDriverEntryPointQueryResult* status) {
    return gpuleak::hooks::entry_point_by_version(2, symbol, fn, version, flags, status);
}
GPULEAK_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** fn, unsigned int version, unsigned long long flags,
    cudaDriverEntryPointQueryResult* status) {
    return gpuleak::hooks::entry_point_by_version(3, symbol, fn, version, flags, status);
}

// The unversioned entry-point exports are CUDA 12's; the _ptsz ones have the same types.
static_assert(std::is_same_v<decltype(&cudaGetDriverEntryPoint), PFN_cudaGetDriverEntryPoint>);
static_assert(std::is_same_v<decltype(&cudaGetDriverEntryPoint_ptsz), PFN_cudaGetDriverEntryPoint>);
static_assert(std::is_same_v<decltype(&cudaGetDriverEntryPointByVersion),
                             PFN_cudaGetDriverEntryPointByVersion>);
static_assert(std::is_same_v<decltype(&cudaGetDriverEntryPointByVersion_ptsz),
                             PFN_cudaGetDriverEntryPointByVersion>);
