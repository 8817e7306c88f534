// Our own declarations of the NVTX3 injection interface libgpuleak.so implements, so that building
// it needs no NVTX (or CUDA toolkit) headers, and so that it is no NVTX client with globals of its
// own. Names are NVTX's, inside gpuleak::nvtx; only what injection.cpp and iteration_range.cpp use.
//
// Checked against nvtx3/nvToolsExt.h where a CUDA toolkit is installed
// (tests/cuda_api/nvtx_types_test.cpp): values, struct layouts and callback types. As in
// hooks/cuda_api.h, nothing here may be named like one of NVTX's macros (NVTX_VERSION, ...).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuleak::nvtx {

using nvtxRangeId_t = std::uint64_t;
struct nvtxDomainRegistration_st;
struct nvtxStringRegistration_st;
using nvtxDomainHandle_t = nvtxDomainRegistration_st*;
using nvtxStringHandle_t = nvtxStringRegistration_st*;

// NVTX_VERSION (what a tool reports it was built against); NVTX_NO_PUSH_POP_TRACKING (what a push
// answers without a tool).
inline constexpr std::uint32_t kNvtxVersion = 3;
inline constexpr int kNoPushPopTracking = -2;

// nvtxEventAttributes_t's messageType.
enum nvtxMessageType_t : unsigned int {
    NVTX_MESSAGE_TYPE_ASCII = 1,
    NVTX_MESSAGE_TYPE_UNICODE = 2,
    NVTX_MESSAGE_TYPE_REGISTERED = 3,
};

union nvtxMessageValue_t {
    const char* ascii;
    const wchar_t* unicode;
    nvtxStringHandle_t registered;
};

union nvtxEventAttributesPayload { // NVTX's nvtxEventAttributes_v2::payload_t
    std::uint64_t ullValue;
    std::int64_t llValue;
    double dValue;
    std::uint32_t uiValue;
    std::int32_t iValue;
    float fValue;
};

struct nvtxEventAttributes_t { // nvtxEventAttributes_v2
    std::uint16_t version;
    std::uint16_t size;
    std::uint32_t category;
    std::int32_t colorType;
    std::uint32_t color;
    std::int32_t payloadType;
    std::int32_t reserved0;
    nvtxEventAttributesPayload payload;
    std::int32_t messageType;
    nvtxMessageValue_t message;
};

// The injection handshake: InitializeInjectionNvtx2(get_export_table).
enum NvtxExportTableID : unsigned int {
    NVTX_ETID_CALLBACKS = 1,
    NVTX_ETID_VERSIONINFO = 3,
};

enum NvtxCallbackModule : unsigned int {
    NVTX_CB_MODULE_CORE = 1,
    NVTX_CB_MODULE_CORE2 = 5,
};

enum NvtxCallbackIdCore : unsigned int {
    NVTX_CBID_CORE_RangeStartEx = 4,
    NVTX_CBID_CORE_RangeStartA = 5,
    NVTX_CBID_CORE_RangeStartW = 6,
    NVTX_CBID_CORE_RangePushEx = 8,
    NVTX_CBID_CORE_RangePushA = 9,
    NVTX_CBID_CORE_RangePushW = 10,
};

enum NvtxCallbackIdCore2 : unsigned int {
    NVTX_CBID_CORE2_DomainRangeStartEx = 2,
    NVTX_CBID_CORE2_DomainRangePushEx = 4,
    NVTX_CBID_CORE2_DomainRegisterStringA = 10,
    NVTX_CBID_CORE2_DomainRegisterStringW = 11,
};

using NvtxFunctionPointer = void (*)();
using NvtxFunctionTable = NvtxFunctionPointer**;
using NvtxGetExportTableFunc_t = const void* (*)(std::uint32_t exportTableId);
using NvtxInitializeInjectionNvtxFunc_t = int (*)(NvtxGetExportTableFunc_t exportTable);

struct NvtxExportTableCallbacks {
    std::size_t struct_size;
    int (*GetModuleFunctionTable)(NvtxCallbackModule callback_module, NvtxFunctionTable* out_table,
                                  unsigned int* out_size);
};

struct NvtxExportTableVersionInfo {
    std::size_t struct_size;
    std::uint32_t version;
    std::uint32_t reserved0;
    void (*SetInjectionNvtxVersion)(std::uint32_t version);
};

} // namespace gpuleak::nvtx
