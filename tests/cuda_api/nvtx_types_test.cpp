// preload/nvtx/nvtx_types.h (our declarations of the NVTX3 injection interface) against
// nvtx3/nvToolsExt.h: all compile time, built into cuda_api_test. See cuda_api_test.cpp for how
// types are compared.
#include "nvtx/nvtx_types.h" // first: nothing in it may be changed by NVTX's macros

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <type_traits>

namespace ours = gpuleak::nvtx;

namespace {

template <typename T> struct Nv { using type = T; };
template <typename T> using nv_t = typename Nv<T>::type;
template <typename T> struct Nv<T*> { using type = nv_t<T>*; };
template <typename T> struct Nv<const T> { using type = const nv_t<T>; };
template <typename R, typename... A> struct Nv<R(A...)> { using type = nv_t<R>(nv_t<A>...); };
#define GPULEAK_MAP(our_type, their_type)                                                          \
    template <> struct Nv<ours::our_type> { using type = their_type; };

GPULEAK_MAP(nvtxDomainRegistration_st, ::nvtxDomainRegistration_st)
GPULEAK_MAP(nvtxStringRegistration_st, ::nvtxStringRegistration_st)
GPULEAK_MAP(nvtxEventAttributes_t, ::nvtxEventAttributes_t)
GPULEAK_MAP(NvtxCallbackModule, ::NvtxCallbackModule)
GPULEAK_MAP(NvtxExportTableCallbacks, ::NvtxExportTableCallbacks)
GPULEAK_MAP(NvtxExportTableVersionInfo, ::NvtxExportTableVersionInfo)
#undef GPULEAK_MAP

#define GPULEAK_SAME(name) static_assert(std::is_same_v<nv_t<ours::name>, ::name>, #name);
GPULEAK_SAME(nvtxRangeId_t)
GPULEAK_SAME(nvtxDomainHandle_t)
GPULEAK_SAME(nvtxStringHandle_t)
GPULEAK_SAME(NvtxFunctionPointer)
GPULEAK_SAME(NvtxFunctionTable)
GPULEAK_SAME(NvtxGetExportTableFunc_t)
GPULEAK_SAME(NvtxInitializeInjectionNvtxFunc_t)
#undef GPULEAK_SAME

static_assert(ours::kNvtxVersion == NVTX_VERSION);
static_assert(ours::kNoPushPopTracking == NVTX_NO_PUSH_POP_TRACKING);

#define GPULEAK_VALUE(name)                                                                        \
    static_assert(static_cast<long long>(ours::name) == static_cast<long long>(::name), #name);
GPULEAK_VALUE(NVTX_MESSAGE_TYPE_ASCII)
GPULEAK_VALUE(NVTX_MESSAGE_TYPE_UNICODE)
GPULEAK_VALUE(NVTX_MESSAGE_TYPE_REGISTERED)
GPULEAK_VALUE(NVTX_ETID_CALLBACKS)
GPULEAK_VALUE(NVTX_ETID_VERSIONINFO)
GPULEAK_VALUE(NVTX_CB_MODULE_CORE)
GPULEAK_VALUE(NVTX_CB_MODULE_CORE2)
GPULEAK_VALUE(NVTX_CBID_CORE_RangeStartEx)
GPULEAK_VALUE(NVTX_CBID_CORE_RangeStartA)
GPULEAK_VALUE(NVTX_CBID_CORE_RangeStartW)
GPULEAK_VALUE(NVTX_CBID_CORE_RangePushEx)
GPULEAK_VALUE(NVTX_CBID_CORE_RangePushA)
GPULEAK_VALUE(NVTX_CBID_CORE_RangePushW)
GPULEAK_VALUE(NVTX_CBID_CORE2_DomainRangeStartEx)
GPULEAK_VALUE(NVTX_CBID_CORE2_DomainRangePushEx)
GPULEAK_VALUE(NVTX_CBID_CORE2_DomainRegisterStringA)
GPULEAK_VALUE(NVTX_CBID_CORE2_DomainRegisterStringW)
#undef GPULEAK_VALUE
static_assert(std::is_same_v<std::underlying_type_t<ours::NvtxCallbackModule>,
                             std::underlying_type_t<::NvtxCallbackModule>>);

#define GPULEAK_STRUCT(ours_t, theirs_t)                                                           \
    static_assert(sizeof(ours_t) == sizeof(theirs_t) && alignof(ours_t) == alignof(theirs_t),      \
                  #theirs_t ": size or alignment");
#define GPULEAK_FIELD(ours_t, theirs_t, field)                                                     \
    static_assert(offsetof(ours_t, field) == offsetof(theirs_t, field) &&                          \
                      sizeof(ours_t::field) == sizeof(theirs_t::field),                            \
                  #theirs_t "::" #field);
#define GPULEAK_FIELD_TYPE(ours_t, theirs_t, field)                                                \
    GPULEAK_FIELD(ours_t, theirs_t, field)                                                         \
    static_assert(std::is_same_v<nv_t<decltype(ours_t::field)>, decltype(theirs_t::field)>,        \
                  #theirs_t "::" #field ": type");

GPULEAK_STRUCT(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, version)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, size)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, category)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, colorType)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, color)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, payloadType)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, reserved0)
GPULEAK_FIELD(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, payload)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, messageType)
GPULEAK_FIELD(ours::nvtxEventAttributes_t, ::nvtxEventAttributes_t, message)

using NvPayload = decltype(::nvtxEventAttributes_t::payload);
GPULEAK_STRUCT(ours::nvtxEventAttributesPayload, NvPayload)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributesPayload, NvPayload, ullValue)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributesPayload, NvPayload, llValue)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributesPayload, NvPayload, dValue)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributesPayload, NvPayload, uiValue)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributesPayload, NvPayload, iValue)
GPULEAK_FIELD_TYPE(ours::nvtxEventAttributesPayload, NvPayload, fValue)

GPULEAK_STRUCT(ours::nvtxMessageValue_t, ::nvtxMessageValue_t)
GPULEAK_FIELD_TYPE(ours::nvtxMessageValue_t, ::nvtxMessageValue_t, ascii)
GPULEAK_FIELD_TYPE(ours::nvtxMessageValue_t, ::nvtxMessageValue_t, unicode)
GPULEAK_FIELD_TYPE(ours::nvtxMessageValue_t, ::nvtxMessageValue_t, registered)

GPULEAK_STRUCT(ours::NvtxExportTableCallbacks, ::NvtxExportTableCallbacks)
GPULEAK_FIELD_TYPE(ours::NvtxExportTableCallbacks, ::NvtxExportTableCallbacks, struct_size)
GPULEAK_FIELD_TYPE(ours::NvtxExportTableCallbacks, ::NvtxExportTableCallbacks,
                   GetModuleFunctionTable)

GPULEAK_STRUCT(ours::NvtxExportTableVersionInfo, ::NvtxExportTableVersionInfo)
GPULEAK_FIELD_TYPE(ours::NvtxExportTableVersionInfo, ::NvtxExportTableVersionInfo, struct_size)
GPULEAK_FIELD_TYPE(ours::NvtxExportTableVersionInfo, ::NvtxExportTableVersionInfo, version)
GPULEAK_FIELD_TYPE(ours::NvtxExportTableVersionInfo, ::NvtxExportTableVersionInfo, reserved0)
GPULEAK_FIELD_TYPE(ours::NvtxExportTableVersionInfo, ::NvtxExportTableVersionInfo,
                   SetInjectionNvtxVersion)

#undef GPULEAK_FIELD_TYPE
#undef GPULEAK_FIELD
#undef GPULEAK_STRUCT

} // namespace
