// Driver-to-runtime error translation and the per-thread "last error" that cudaGetLastError reads.
#pragma once

#include "cuda_runtime.hpp"

namespace fakecudart {

cudaError_t to_runtime_error(CUresult rc) noexcept;

// Every public entry point returns through this, so a failure is remembered for cudaGetLastError.
cudaError_t finish(cudaError_t e) noexcept;
inline cudaError_t finish(CUresult rc) noexcept {
    return finish(to_runtime_error(rc));
}

cudaError_t take_last_error() noexcept;
cudaError_t peek_last_error() noexcept;

// nullptr for a code this runtime never produces.
const char* error_name(cudaError_t e) noexcept;
const char* error_text(cudaError_t e) noexcept;

} // namespace fakecudart
