// What each intercepted driver call records. One function per entry of GPULEAK_DRIVER_HOOKS
// (hook_list.h), taking the exact real function the caller would have reached, then the call's own
// arguments.
#pragma once

#include "hooks/cuda_api.h"
#include "hooks/hook_list.h"

#define GPULEAK_UNPAREN(...) __VA_ARGS__

namespace gpuleak::hooks {

enum class DriverHook : int {
#define GPULEAK_HOOK_ENUM(sym, pfn, qn, minv, maxv, params, args) sym,
    GPULEAK_DRIVER_HOOKS(GPULEAK_HOOK_ENUM)
#undef GPULEAK_HOOK_ENUM
        Count
};

} // namespace gpuleak::hooks

namespace gpuleak::hooks::impl {

#define GPULEAK_IMPL_DECL(sym, pfn, qn, minv, maxv, params, args)                                  \
    CUresult sym(pfn real, GPULEAK_UNPAREN params);
GPULEAK_DRIVER_HOOKS(GPULEAK_IMPL_DECL)
#undef GPULEAK_IMPL_DECL

} // namespace gpuleak::hooks::impl

namespace gpuleak::hooks {

// Where a pointer handed out by the driver (a resolver, dlsym on libcuda, a runtime entry-point
// query) should lead: our wrapper for that exact variant, or the pointer itself when we do not
// intercept it. `query` and `version` identify the variant when the pointer has no symbol name.
void* route_driver_pointer(const char* query, int version, unsigned long long flags, void* real);
// Same for a lookup by exact symbol name (dlsym on a libcuda handle).
void* route_driver_symbol(const char* symbol, void* real);
// Whether `symbol` is one of our driver exports and libcuda has no definition of it loaded.
bool driver_export_without_definition(const char* symbol);

} // namespace gpuleak::hooks
