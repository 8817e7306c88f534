// libgpuleak.so as an NVTX injection library: with NVTX_INJECTION64_PATH naming it, every NVTX
// instance in the process (the NVTX3 headers put one in each library that uses them) calls
// InitializeInjectionNvtx2 on its first NVTX call, and we install callbacks for the calls that
// open a range. Opening the iteration range records a Marker; nothing else is recorded.
//
// What the application sees does not change: NVTX sets every call we leave alone to the no-op it
// would be without a tool, and ours answer what those no-ops answer (no push/pop tracking, range
// id 0). The one difference is a non-NULL handle from nvtxDomainRegisterString for the range's own
// name, which only ever goes back into NVTX.
#include <dlfcn.h>

#include <cstddef>
#include <type_traits>

#include "hooks/real_symbols.h"
#include "hooks/reentry.h"
#include "nvtx/iteration_range.h"
#include "nvtx/nvtx_types.h"
#include "recorder/recorder.h"
#include "support/log.h"

namespace gpuleak::nvtx {
namespace {

void mark_iteration() {
    // Never record from inside a hook: the thread's chunk lock may be held by this very thread.
    hooks::HookGuard guard;
    if (guard.nested()) return;
    recorder::marker(iteration_range());
}

int push_a(const char* message) {
    if (is_iteration_range(message)) mark_iteration();
    return kNoPushPopTracking;
}
int push_w(const wchar_t* message) {
    if (is_iteration_range(message)) mark_iteration();
    return kNoPushPopTracking;
}
int push_ex(const nvtxEventAttributes_t* attributes) {
    if (is_iteration_range(attributes)) mark_iteration();
    return kNoPushPopTracking;
}
nvtxRangeId_t start_a(const char* message) {
    if (is_iteration_range(message)) mark_iteration();
    return 0;
}
nvtxRangeId_t start_w(const wchar_t* message) {
    if (is_iteration_range(message)) mark_iteration();
    return 0;
}
nvtxRangeId_t start_ex(const nvtxEventAttributes_t* attributes) {
    if (is_iteration_range(attributes)) mark_iteration();
    return 0;
}
int domain_push_ex(nvtxDomainHandle_t, const nvtxEventAttributes_t* attributes) {
    return push_ex(attributes);
}
nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t, const nvtxEventAttributes_t* attributes) {
    return start_ex(attributes);
}
nvtxStringHandle_t register_string_a(nvtxDomainHandle_t, const char* text) {
    return is_iteration_range(text) ? iteration_range_handle() : nullptr;
}
nvtxStringHandle_t register_string_w(nvtxDomainHandle_t, const wchar_t* text) {
    return is_iteration_range(text) ? iteration_range_handle() : nullptr;
}

struct Callback {
    unsigned id;
    NvtxFunctionPointer function;
};

template <typename F> Callback callback(unsigned id, F* function) {
    return {id, reinterpret_cast<NvtxFunctionPointer>(function)};
}

// Installs the callbacks a module's table has room for; false if the instance has no such module
// (an older NVTX may lack CORE2).
template <size_t N>
bool install(const NvtxExportTableCallbacks* table, NvtxCallbackModule module,
             const Callback (&callbacks)[N]) {
    NvtxFunctionTable slots = nullptr;
    unsigned size = 0;
    if (!table->GetModuleFunctionTable(module, &slots, &size) || !slots) return false;
    for (const Callback& c : callbacks)
        if (c.id < size && slots[c.id]) *slots[c.id] = c.function;
    return true;
}

// Loaded only through NVTX_INJECTION64_PATH, this copy hooks nothing (its exports are not in the
// global scope) and a trace of markers alone would be useless; when another copy is preloaded,
// writing a second trace for the same process would be worse.
bool is_the_preloaded_copy() {
    auto dl = hooks::real_dlsym();
    void* global_scope = dlopen(nullptr, RTLD_LAZY);
    if (!dl || !global_scope) return false;
    void* found = dl(global_scope, "InitializeInjectionNvtx2");
    dlclose(global_scope);
    return hooks::in_self(found);
}

int initialize(NvtxGetExportTableFunc_t get_export_table) {
    if (!get_export_table || !load_iteration_range()) return 0;
    if (!is_the_preloaded_copy()) {
        log::warn("NVTX_INJECTION64_PATH names libgpuleak.so but it is not preloaded (LD_PRELOAD): "
                  "NVTX ranges are not recorded");
        return 0;
    }
    auto* table =
        static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (!table ||
        table->struct_size < offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) +
                                 sizeof(table->GetModuleFunctionTable) ||
        !table->GetModuleFunctionTable)
        return 0;

    static const Callback core[] = {
        callback(NVTX_CBID_CORE_RangeStartEx, start_ex),
        callback(NVTX_CBID_CORE_RangeStartA, start_a),
        callback(NVTX_CBID_CORE_RangeStartW, start_w),
        callback(NVTX_CBID_CORE_RangePushEx, push_ex),
        callback(NVTX_CBID_CORE_RangePushA, push_a),
        callback(NVTX_CBID_CORE_RangePushW, push_w),
    };
    static const Callback core2[] = {
        callback(NVTX_CBID_CORE2_DomainRangeStartEx, domain_start_ex),
        callback(NVTX_CBID_CORE2_DomainRangePushEx, domain_push_ex),
        callback(NVTX_CBID_CORE2_DomainRegisterStringA, register_string_a),
        callback(NVTX_CBID_CORE2_DomainRegisterStringW, register_string_w),
    };
    if (!install(table, NVTX_CB_MODULE_CORE, core)) return 0;
    install(table, NVTX_CB_MODULE_CORE2, core2);

    // Tools are asked to say which NVTX version they were built against.
    auto* version =
        static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
    if (version &&
        version->struct_size >= offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion) +
                                    sizeof(version->SetInjectionNvtxVersion) &&
        version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(kNvtxVersion);
    log::debug("NVTX ranges named \"{}\" mark iterations", iteration_range());
    return 1;
}

} // namespace
} // namespace gpuleak::nvtx

// The entry point NVTX's loader looks up with dlsym. 1 = attached; on 0 NVTX closes its handle (we
// stay mapped: -z nodelete) and turns every NVTX call of that instance into a no-op.
extern "C" __attribute__((visibility("default"))) int
InitializeInjectionNvtx2(gpuleak::nvtx::NvtxGetExportTableFunc_t get_export_table) {
    return gpuleak::nvtx::initialize(get_export_table);
}
static_assert(std::is_same_v<decltype(&InitializeInjectionNvtx2),
                             gpuleak::nvtx::NvtxInitializeInjectionNvtxFunc_t>);
