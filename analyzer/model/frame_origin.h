// Whose code a frame is. A user fixes a leak in their own code, so the headline of a site is its
// innermost frame of the program's own code, and loops are looked for only there. Everything else
// is named by why it is skipped: the CUDA runtime (shared, or linked statically into the program),
// the interpreter, and libraries and frameworks (site-packages, the standard library, PyTorch,
// NumPy, CuPy, JAX, NCCL, cuBLAS, system libraries).
#pragma once

#include <string>

namespace gpuleak::analyzer {

enum class FrameOrigin : uint8_t {
    User,        // the program's own code: scripts, helper modules and binaries of its tree
    Library,     // frameworks and libraries (site-packages, stdlib, system and toolkit libraries)
    Runtime,     // the CUDA runtime and driver, and gpuleak itself
    Interpreter, // CPython's own C frames and the C runtime's start-up
    Unknown,     // an address no module or symbol explains
};
const char* frame_origin_name(FrameOrigin o);

struct Frame;
FrameOrigin classify_frame(const Frame& f);

// Python source files that belong to libraries: site-packages, dist-packages, the standard library
// (".../lib/python3.X/..."), frozen modules ("<frozen ...>").
bool is_library_file(const std::string& file);

// A function of the CUDA runtime: its API (cudaMalloc, ...; static cudart places them in the
// program's own binary) and the internals of libcudart_static.a, which NVIDIA names
// `libcudart_static_<40 hex digits>` (also the `cudart::` / `__cudart` names of older toolkits).
bool is_cuda_runtime_function(const std::string& function);
// Of those, the API entry points (cuda + upper case letter): where runtime-internal frames end.
bool is_cuda_runtime_api(const std::string& function);

} // namespace gpuleak::analyzer
