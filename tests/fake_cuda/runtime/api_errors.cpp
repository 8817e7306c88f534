// Exported error-reporting entry points.
#include "errors.hpp"

cudaError_t cudaGetLastError(void) {
    return fakecudart::take_last_error();
}

cudaError_t cudaPeekAtLastError(void) {
    return fakecudart::peek_last_error();
}

const char* cudaGetErrorString(cudaError_t error) {
    const char* text = fakecudart::error_text(error);
    // Real cudart answers unknown codes with a fixed string rather than NULL.
    return text != nullptr ? text : "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t error) {
    const char* name = fakecudart::error_name(error);
    return name != nullptr ? name : "unrecognized error code";
}
