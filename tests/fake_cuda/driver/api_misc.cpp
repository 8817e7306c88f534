// Exported entry points that touch no memory: error strings, private export tables, capture state.
#include "call_log.hpp"
#include "call_names.hpp"
#include "config.hpp"
#include "device_state.hpp"

using fakecuda::Call;
using fakecuda::call_id;

CUresult cuGetErrorString(CUresult error, const char** pStr) {
    const Call call{call_id("cuGetErrorString")};
    if (pStr == nullptr)
        return call.done(CUDA_ERROR_INVALID_VALUE, "error=%d", static_cast<int>(error));
    *pStr = fakecuda::result_text(error);
    return call.done(*pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE, "error=%d",
                     static_cast<int>(error));
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
    const Call call{call_id("cuGetErrorName")};
    if (pStr == nullptr)
        return call.done(CUDA_ERROR_INVALID_VALUE, "error=%d", static_cast<int>(error));
    *pStr = fakecuda::result_name(error);
    return call.done(*pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE, "error=%d",
                     static_cast<int>(error));
}

// cudart asks for private tables right after its handshake; refusing is the one honest answer a
// fake can give (their contents are undocumented), and the fake cudart never asks.
CUresult cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
    const Call call{call_id("cuGetExportTable")};
    if (ppExportTable != nullptr) *ppExportTable = nullptr;
    return call.done(CUDA_ERROR_NOT_SUPPORTED, "pExportTableId=%p",
                     static_cast<const void*>(pExportTableId));
}

namespace {

CUresult is_capturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && captureStatus == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *captureStatus = fakecuda::config().capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                                      : CU_STREAM_CAPTURE_STATUS_NONE;
    (void)hStream;
    return rc;
}

} // namespace

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
    const Call call{call_id("cuStreamIsCapturing")};
    const CUresult rc = is_capturing(hStream, captureStatus);
    return call.done(rc, "hStream=%p, *captureStatus=%d", static_cast<void*>(hStream),
                     rc == CUDA_SUCCESS ? static_cast<int>(*captureStatus) : -1);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
    const Call call{call_id("cuStreamIsCapturing_ptsz")};
    const CUresult rc = is_capturing(hStream, captureStatus);
    return call.done(rc, "hStream=%p, *captureStatus=%d", static_cast<void*>(hStream),
                     rc == CUDA_SUCCESS ? static_cast<int>(*captureStatus) : -1);
}
