// Generated from GPULEAK_DRIVER_HOOKS (hook_list.h): the exported driver symbols (direct binding),
// a few extra wrappers per hook for pointers the driver hands out at run time, and the routing
// between them.
//
// Why slots: a resolver may hand out a different pointer for the same symbol than the exported
// one (cudart's self-query resolver is an example). Each wrapper slot forwards to exactly one real
// pointer, so the caller always reaches the function the driver chose for it.
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>

#include "gpuleak/format/records.h"
#include "hooks/driver_impls.h"
#include "hooks/real_symbols.h"
#include "support/log.h"

#define GPULEAK_EXPORT extern "C" __attribute__((visibility("default")))

using namespace gpuleak::cuda; // the exports below are declared at global scope, in CUDA's names

namespace gpuleak::hooks {
namespace {

constexpr int kSlots = 4; // slot 0: the exported symbol, bound to the next definition in scope

struct HookEntry {
    const char* symbol;
    const char* query;
    int min_version;
    int max_version;
    std::atomic<void*> real[kSlots];
    void* wrappers[kSlots];
    std::atomic<bool> warned_full;
};

HookEntry g_hooks[static_cast<int>(DriverHook::Count)];

struct TableInit;
const TableInit& table();

void* real_for(DriverHook h, int slot) {
    HookEntry& e = g_hooks[static_cast<int>(h)];
    if (slot == 0) table(); // a hook can run before this library's constructors, and on any thread
    void* p = e.real[slot].load(std::memory_order_acquire);
    if (p || slot != 0) return p;
    p = next_definition(e.symbol, "libcuda.so");
    if (p && !in_self(p)) {
        e.real[0].store(p, std::memory_order_release);
        return p;
    }
    return nullptr;
}

template <DriverHook H> struct ImplOf;
#define GPULEAK_IMPL_OF(sym, pfn, qn, minv, maxv, params, args)                                    \
    template <> struct ImplOf<DriverHook::sym> { static constexpr auto run = &impl::sym; };
GPULEAK_DRIVER_HOOKS(GPULEAK_IMPL_OF)
#undef GPULEAK_IMPL_OF

template <DriverHook H, int S, typename Fn> struct Slot;
template <DriverHook H, int S, typename... A> struct Slot<H, S, CUresult (*)(A...)> {
    static CUresult call(A... a) {
        auto real = reinterpret_cast<CUresult (*)(A...)>(real_for(H, S));
        // Only reachable through our export while no libcuda is loaded (pitfall 13).
        if (!real) return CUDA_ERROR_NOT_INITIALIZED;
        return ImplOf<H>::run(real, a...);
    }
};

} // namespace
} // namespace gpuleak::hooks

// The exported symbols. Their types are the list's PFN types (cuda_api.h), which tests/cuda_api
// checks against cudaTypedefs.h.
#define GPULEAK_EXPORT_HOOK(sym, pfn, qn, minv, maxv, params, args)                                \
    GPULEAK_EXPORT CUresult sym params {                                                           \
        return gpuleak::hooks::Slot<gpuleak::hooks::DriverHook::sym, 0, pfn>::call args;           \
    }                                                                                              \
    static_assert(std::is_same_v<decltype(&sym), pfn>, #sym " does not match " #pfn);
GPULEAK_DRIVER_HOOKS(GPULEAK_EXPORT_HOOK)
#undef GPULEAK_EXPORT_HOOK

namespace gpuleak::hooks {
namespace {

struct TableInit {
    TableInit() {
#define GPULEAK_FILL(sym, pfn, qn, minv, maxv, params, args)                                       \
    {                                                                                              \
        HookEntry& e = g_hooks[static_cast<int>(DriverHook::sym)];                                 \
        e.symbol = #sym;                                                                           \
        e.query = qn;                                                                              \
        e.min_version = minv;                                                                      \
        e.max_version = maxv;                                                                      \
        e.wrappers[0] = reinterpret_cast<void*>(&::sym);                                           \
        e.wrappers[1] = reinterpret_cast<void*>(&Slot<DriverHook::sym, 1, pfn>::call);             \
        e.wrappers[2] = reinterpret_cast<void*>(&Slot<DriverHook::sym, 2, pfn>::call);             \
        e.wrappers[3] = reinterpret_cast<void*>(&Slot<DriverHook::sym, 3, pfn>::call);             \
    }
        GPULEAK_DRIVER_HOOKS(GPULEAK_FILL)
#undef GPULEAK_FILL
    }
};
// Filled on first use: a hook can be called before this library's constructors have run.
const TableInit& table() {
    static TableInit init;
    return init;
}

int hook_by_symbol(const char* symbol) {
    table();
    for (int i = 0; i < static_cast<int>(DriverHook::Count); ++i)
        if (!std::strcmp(g_hooks[i].symbol, symbol)) return i;
    return -1;
}

bool is_ptsz(const char* symbol) {
    size_t n = std::strlen(symbol);
    return n > 5 && !std::strcmp(symbol + n - 5, "_ptsz");
}

int hook_by_query(const char* query, int version, unsigned long long flags) {
    table();
    bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    for (int i = 0; i < static_cast<int>(DriverHook::Count); ++i) {
        const HookEntry& e = g_hooks[i];
        if (std::strcmp(e.query, query) || version < e.min_version || version >= e.max_version)
            continue;
        // Only stream-ordered calls have _ptsz twins; for the others the flag does not matter.
        bool has_twin = hook_by_symbol((std::string(e.query) + "_ptsz").c_str()) >= 0;
        if (!has_twin || is_ptsz(e.symbol) == per_thread) return i;
    }
    return -1;
}

void* wrapper_for(int index, void* real) {
    HookEntry& e = g_hooks[index];
    if (real_for(static_cast<DriverHook>(index), 0) == real) return e.wrappers[0];
    for (int s = 1; s < kSlots; ++s) {
        void* current = e.real[s].load(std::memory_order_acquire);
        if (current == real) return e.wrappers[s];
        if (!current && e.real[s].compare_exchange_strong(current, real)) return e.wrappers[s];
        if (current == real) return e.wrappers[s];
    }
    if (!e.warned_full.exchange(true))
        log::warn(
            "more than {} distinct driver pointers for {}; calls through the others are not traced",
            kSlots, e.symbol);
    return real;
}

} // namespace

void* route_driver_pointer(const char* query, int version, unsigned long long flags, void* real) {
    if (in_self(real)) return real; // already ours (e.g. through a wrapped resolver)
    // Prefer the symbol the pointer itself carries: it names the exact ABI variant.
    Dl_info info{};
    int index = -1;
    if (dladdr(real, &info) && info.dli_saddr == real && info.dli_sname)
        index = hook_by_symbol(info.dli_sname);
    if (index < 0) index = hook_by_query(query, version, flags);
    if (index < 0) return real;
    log::debug("wrapped {} v{} flags {} -> {}", query, version, flags, g_hooks[index].symbol);
    return wrapper_for(index, real);
}

void* route_driver_symbol(const char* symbol, void* real) {
    int index = hook_by_symbol(symbol);
    if (index < 0 || in_self(real)) return real;
    return wrapper_for(index, real);
}

bool driver_export_without_definition(const char* symbol) {
    int index = hook_by_symbol(symbol);
    return index >= 0 && !real_for(static_cast<DriverHook>(index), 0);
}

} // namespace gpuleak::hooks

// The hook lists against GPULEAK_API_LIST, whose values are stored in traces. A memory hook records
// under its own symbol's value and a runtime hook under its `api` (else format::Api::<name> does
// not compile here); every value but Unknown must be some hook's: a value no hook records under is
// a hook that was removed or never added.
namespace gpuleak::hooks {
namespace {

constexpr bool same_name(const char* a, const char* b) {
    while (*a && *a == *b)
        ++a, ++b;
    return *a == *b;
}

// Whether `name` is `base` followed by "_ptsz".
constexpr bool ptsz_of(const char* name, const char* base) {
    while (*base && *base == *name)
        ++base, ++name;
    return !*base && same_name(name, "_ptsz");
}

constexpr bool recorded_by_a_hook(format::Api value) {
#define GPULEAK_DRIVER_RECORDS_AS(sym, ...)                                                        \
    if (format::Api::sym == value) return true;
    GPULEAK_DRIVER_MEMORY_HOOKS(GPULEAK_DRIVER_RECORDS_AS)
#undef GPULEAK_DRIVER_RECORDS_AS
#define GPULEAK_RUNTIME_RECORDS_AS(sym, api, ...)                                                  \
    if (format::Api::api == value) return true;
    GPULEAK_RUNTIME_HOOKS(GPULEAK_RUNTIME_RECORDS_AS)
#undef GPULEAK_RUNTIME_RECORDS_AS
    return false;
}

#define GPULEAK_API_HOOKED(id, name)                                                               \
    static_assert(format::Api::id == format::Api::Unknown || recorded_by_a_hook(format::Api::id),  \
                  "format::Api::" #id " is in GPULEAK_API_LIST but no entry of hook_list.h "       \
                  "records under it");
GPULEAK_API_LIST(GPULEAK_API_HOOKED)
#undef GPULEAK_API_HOOKED

// A runtime hook records under its function's name; a _ptsz variant under its base function's.
#define GPULEAK_RUNTIME_API_NAME(sym, api, ...)                                                    \
    static_assert(same_name(#sym, #api) || ptsz_of(#sym, #api),                                    \
                  "runtime hook " #sym ": its api must be " #sym " (or, for X_ptsz, X)");
GPULEAK_RUNTIME_HOOKS(GPULEAK_RUNTIME_API_NAME)
#undef GPULEAK_RUNTIME_API_NAME

} // namespace
} // namespace gpuleak::hooks
