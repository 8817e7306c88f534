// The private export tables (cuGetExportTable) that NVIDIA's libcudart needs; see export_tables.cpp.
#pragma once

#include "cuda_api.hpp"

namespace fakecuda {

// Runs the runtime's destructors for the context-local storage of `ctx` and forgets it.
void destroy_context_storage(CUcontext ctx) noexcept;

} // namespace fakecuda
