// Thread-local state shared by all hooks.
#pragma once

#include "gpuleak/format/records.h"

namespace gpuleak::hooks {

// Set while a hook records, so anything the recorder calls that re-enters a hook is passed through.
extern __thread bool t_in_hook __attribute__((tls_model("initial-exec")));
// The runtime API (cudaMalloc, ...) the current driver call came from, if it came through one.
extern __thread format::Api t_runtime_api __attribute__((tls_model("initial-exec")));

class HookGuard {
public:
    HookGuard() : nested_(t_in_hook) { t_in_hook = true; }
    ~HookGuard() {
        if (!nested_) t_in_hook = false;
    }
    HookGuard(const HookGuard&) = delete;
    HookGuard& operator=(const HookGuard&) = delete;
    bool nested() const { return nested_; }

private:
    bool nested_;
};

// The API name a driver record carries: the runtime call's when there is one (one call, one
// record).
inline format::Api api_or_runtime(format::Api driver_api) {
    return t_runtime_api != format::Api::Unknown ? t_runtime_api : driver_api;
}

} // namespace gpuleak::hooks
