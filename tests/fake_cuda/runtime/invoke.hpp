// Calling a driver entry point from the table, with the runtime's error conventions.
#pragma once

#include "driver_table.hpp"
#include "errors.hpp"

namespace fakecudart {

// The handshake's failure if it failed; cudaErrorNotSupported if this driver did not provide the
// entry point; otherwise the driver's answer translated to a cudaError_t.
template <typename Fn, typename... Args> cudaError_t invoke(Fn DriverTable::*entry, Args... args) {
    const DriverTable& t = driver();
    if (t.status != cudaSuccess) return t.status;
    const Fn fn = t.*entry;
    if (fn == nullptr) return cudaErrorNotSupported;
    return to_runtime_error(fn(args...));
}

} // namespace fakecudart
