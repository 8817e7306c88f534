// Per-entry-point call counting (for fakecuda_calls) and the FAKECUDA_LOG trace.
#pragma once

#include "cuda_api.hpp"

#include <cstddef>
#include <string_view>

namespace fakecuda {

// Constructed first thing in every entry point, so a call is counted even when it fails.
class Call {
public:
    explicit Call(std::size_t id) noexcept;

    // Logs "fakecuda: NAME(args) -> RESULT" when FAKECUDA_LOG=1 and hands rc back to the caller.
    CUresult done(CUresult rc, const char* args_format, ...) const noexcept
        __attribute__((format(printf, 3, 4)));

private:
    std::size_t id_;
};

// -1 for a name that is not in kCallNames.
long calls_of(std::string_view name) noexcept;

// nullptr for a code the fake never returns.
const char* result_name(CUresult rc) noexcept;
const char* result_text(CUresult rc) noexcept;

} // namespace fakecuda
