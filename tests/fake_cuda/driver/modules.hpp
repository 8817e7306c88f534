// Modules, libraries, kernels and functions: handles only. The fake never looks inside a fat
// binary and runs no kernel; a launch is accepted and does nothing.
#pragma once

#include "cuda_api.hpp"

namespace fakecuda {

// Any image (fat binary, its wrapper, cubin, PTX) becomes a module handle.
CUresult load_module(CUmodule* module, const void* image) noexcept;

} // namespace fakecuda
