#include "call_log.hpp"

#include "call_names.hpp"
#include "config.hpp"

#include <array>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <unistd.h>

namespace fakecuda {
namespace {

std::array<std::atomic<long>, kCallNames.size()> g_counts{};

struct ResultInfo {
    CUresult rc;
    const char* name;
    const char* text;
};

constexpr ResultInfo kResults[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

} // namespace

Call::Call(std::size_t id) noexcept : id_(id) {
    g_counts[id].fetch_add(1, std::memory_order_relaxed);
}

CUresult Call::done(CUresult rc, const char* args_format, ...) const noexcept {
    if (!config().log) return rc;
    char args[512];
    va_list ap;
    va_start(ap, args_format);
    std::vsnprintf(args, sizeof args, args_format, ap);
    va_end(ap);
    char result[32];
    if (const char* name = result_name(rc))
        std::snprintf(result, sizeof result, "%s", name);
    else
        std::snprintf(result, sizeof result, "%d", static_cast<int>(rc));
    char line[768];
    const int n = std::snprintf(line, sizeof line, "fakecuda: %.*s(%s) -> %s\n",
                                static_cast<int>(kCallNames[id_].size()), kCallNames[id_].data(),
                                args, result);
    // One write(2) per line keeps lines from different threads whole, and stays usable in a
    // forked child where stdio locks may be held.
    if (n > 0) {
        const auto len = static_cast<std::size_t>(n) < sizeof line ? static_cast<std::size_t>(n)
                                                                   : sizeof line - 1;
        [[maybe_unused]] const ssize_t written = ::write(2, line, len);
    }
    return rc;
}

long calls_of(std::string_view name) noexcept {
    for (std::size_t i = 0; i < kCallNames.size(); ++i)
        if (kCallNames[i] == name) return g_counts[i].load(std::memory_order_relaxed);
    return -1;
}

const char* result_name(CUresult rc) noexcept {
    for (const auto& r : kResults)
        if (r.rc == rc) return r.name;
    return nullptr;
}

const char* result_text(CUresult rc) noexcept {
    for (const auto& r : kResults)
        if (r.rc == rc) return r.text;
    return nullptr;
}

} // namespace fakecuda
