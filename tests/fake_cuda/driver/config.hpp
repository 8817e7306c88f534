// Knobs a test sets through the environment; read once, on first use, so a value cannot change
// under a running program.
#pragma once

#include <cstddef>

namespace fakecuda {

inline constexpr int kMaxDevices = 16;

struct Config {
    unsigned long long capacity; // FAKECUDA_CAPACITY: bytes per device, default 8 GiB
    int devices;                 // FAKECUDA_DEVICES: 0..kMaxDevices, default 1
    bool capturing;              // FAKECUDA_CAPTURING=1: every stream reports an active capture
    bool log;                    // FAKECUDA_LOG=1: one stderr line per call
    bool hidden_pointers;        // FAKECUDA_HIDDEN_POINTERS=1: cuGetProcAddress answers with
                                 // functions no exported name covers, as the real driver does
};

const Config& config();

} // namespace fakecuda
