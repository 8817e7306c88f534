#include "errors.hpp"

namespace fakecudart {
namespace {

thread_local cudaError_t t_last_error = cudaSuccess;

struct Mapping {
    CUresult driver;
    cudaError_t runtime;
};

constexpr Mapping kMappings[] = {
    {CUDA_SUCCESS, cudaSuccess},
    {CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue},
    {CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation},
    {CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError},
    {CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice},
    {CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice},
    {CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized},
    {CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle},
    {CUDA_ERROR_NOT_FOUND, cudaErrorSymbolNotFound},
    {CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported},
};

struct Description {
    cudaError_t error;
    const char* name;
    const char* text;
};

constexpr Description kDescriptions[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "invalid device context"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

} // namespace

cudaError_t to_runtime_error(CUresult rc) noexcept {
    for (const auto& m : kMappings)
        if (m.driver == rc) return m.runtime;
    return cudaErrorUnknown;
}

cudaError_t finish(cudaError_t e) noexcept {
    if (e != cudaSuccess) t_last_error = e;
    return e;
}

cudaError_t take_last_error() noexcept {
    const cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    return e;
}

cudaError_t peek_last_error() noexcept {
    return t_last_error;
}

const char* error_name(cudaError_t e) noexcept {
    for (const auto& d : kDescriptions)
        if (d.error == e) return d.name;
    return nullptr;
}

const char* error_text(cudaError_t e) noexcept {
    for (const auto& d : kDescriptions)
        if (d.error == e) return d.text;
    return nullptr;
}

} // namespace fakecudart
