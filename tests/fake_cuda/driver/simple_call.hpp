// Entry points whose effect the fake does not model beyond "accepted": counted and logged like
// every other call, CUDA_SUCCESS once cuInit has succeeded (the body may set `rc` otherwise).
#pragma once

#include "call_log.hpp"
#include "call_names.hpp"
#include "device_state.hpp"

#define FAKECUDA_ACCEPT(name, params, ...)                                                         \
    CUresult name params {                                                                         \
        const fakecuda::Call call{fakecuda::call_id(#name)};                                       \
        CUresult rc = fakecuda::init_status();                                                     \
        if (rc == CUDA_SUCCESS) {                                                                  \
            __VA_ARGS__                                                                            \
        }                                                                                          \
        return call.done(rc, "%s", "");                                                            \
    }
