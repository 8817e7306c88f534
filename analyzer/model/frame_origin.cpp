#include "model/frame_origin.h"

#include <cctype>
#include <cstring>

#include "model/site_table.h"

namespace gpuleak::analyzer {
namespace {

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

bool contains(const std::string& s, const char* needle) {
    return s.find(needle) != std::string::npos;
}

std::string basename(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool any_prefix(const std::string& s, std::initializer_list<const char*> prefixes) {
    for (const char* p : prefixes)
        if (starts_with(s, p)) return true;
    return false;
}

bool is_hex_digits(const std::string& s, size_t from, size_t n) {
    if (s.size() < from + n) return false;
    for (size_t i = from; i < from + n; ++i)
        if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    return true;
}

FrameOrigin classify_module(const std::string& module) {
    std::string base = basename(module);
    if (any_prefix(base, {"libgpuleak", "libcuda.so", "libcudart", "libunwind", "libnvidia-"}))
        return FrameOrigin::Runtime;
    if (starts_with(base, "libpython")) return FrameOrigin::Interpreter;
    // A python executable (Debian links libpython into it).
    if (starts_with(base, "python")) {
        bool version = true;
        for (size_t i = 6; i < base.size(); ++i)
            version = version && (std::isdigit(static_cast<unsigned char>(base[i])) ||
                                  base[i] == '.' || base[i] == 'm' || base[i] == 'd');
        if (version) return FrameOrigin::Interpreter;
    }
    if (contains(module, "/site-packages/") || contains(module, "/dist-packages/") ||
        contains(module, "/lib/python3") ||
        any_prefix(module, {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/local/cuda",
                            "/usr/local/lib/"}))
        return FrameOrigin::Library;
    if (any_prefix(base,
                   {"libtorch", "libc10", "libcublas", "libcudnn", "libnccl", "libcufft",
                    "libcurand", "libcusparse", "libcusolver", "libnvrtc", "libnvJitLink", "libxla",
                    "libjax", "libcupy", "libffi", "libstdc++", "libc.so", "libm.so", "ld-linux"}))
        return FrameOrigin::Library;
    return FrameOrigin::User;
}

} // namespace

const char* frame_origin_name(FrameOrigin o) {
    switch (o) {
    case FrameOrigin::User:
        return "user";
    case FrameOrigin::Library:
        return "library";
    case FrameOrigin::Runtime:
        return "cuda-runtime";
    case FrameOrigin::Interpreter:
        return "interpreter";
    case FrameOrigin::Unknown:
        break;
    }
    return "unknown";
}

bool is_library_file(const std::string& file) {
    return contains(file, "/site-packages/") || contains(file, "/dist-packages/") ||
           contains(file, "/lib/python3") ||
           (!file.empty() && file[0] == '<' && file != "<stdin>" && file != "<string>");
}

bool is_cuda_runtime_api(const std::string& f) {
    return f.size() > 4 && starts_with(f, "cuda") && std::isupper(static_cast<unsigned char>(f[4]));
}

bool is_cuda_runtime_function(const std::string& f) {
    static constexpr size_t kStaticPrefix = sizeof("libcudart_static_") - 1;
    if (starts_with(f, "libcudart_static_") && is_hex_digits(f, kStaticPrefix, 40)) return true;
    return starts_with(f, "cudart::") || starts_with(f, "__cudart") || is_cuda_runtime_api(f);
}

FrameOrigin classify_frame(const Frame& f) {
    if (f.python) {
        if (f.file.empty()) return FrameOrigin::Unknown;
        return is_library_file(f.file) ? FrameOrigin::Library : FrameOrigin::User;
    }
    if (f.function.empty() && f.file.empty()) {
        // A stripped interpreter's static functions (Debian's python3: gen_send_ex, builtin_sum)
        // are still the interpreter's: which of them a call passes through changes as CPython
        // specializes it, and must not make another site.
        return !f.module.empty() && classify_module(f.module) == FrameOrigin::Interpreter
                   ? FrameOrigin::Interpreter
                   : FrameOrigin::Unknown;
    }
    if (is_cuda_runtime_function(f.function)) return FrameOrigin::Runtime;
    FrameOrigin by_module = f.module.empty() ? FrameOrigin::User : classify_module(f.module);
    if (by_module != FrameOrigin::User) return by_module;
    // The C runtime's start-up and CPython's API compiled into an embedding program.
    if (any_prefix(f.function, {"__libc_start", "_start", "Py_", "_Py", "PyEval", "pymain_"}))
        return FrameOrigin::Interpreter;
    // Frameworks by namespace, wherever they were linked.
    if (any_prefix(f.function,
                   {"std::", "c10::", "at::", "torch::", "caffe2::", "pybind11::", "__gnu_cxx::"}))
        return FrameOrigin::Library;
    return FrameOrigin::User;
}

} // namespace gpuleak::analyzer
