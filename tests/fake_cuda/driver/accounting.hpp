// Byte accounting per memory class. Device bytes are the only ones bounded (FAKECUDA_CAPACITY per
// device); linear and VMM allocations share the same budget, as on a real GPU.
#pragma once

#include <cstddef>

namespace fakecuda {

// False, and nothing charged, when the device would exceed its capacity.
bool charge_device(int device, std::size_t bytes) noexcept;
void credit_device(int device, std::size_t bytes) noexcept;

void charge_host_pinned(std::size_t bytes) noexcept;
void credit_host_pinned(std::size_t bytes) noexcept;

void charge_managed(std::size_t bytes) noexcept;
// Host memory registered with cuMemHostRegister (the program's own memory, now page-locked).
void charge_host_registered(std::size_t bytes) noexcept;
void credit_host_registered(std::size_t bytes) noexcept;
unsigned long long host_registered_used() noexcept;
void credit_managed(std::size_t bytes) noexcept;

unsigned long long device_used(int device) noexcept;
unsigned long long device_peak(int device) noexcept;
unsigned long long host_pinned_used() noexcept;
unsigned long long managed_used() noexcept;

} // namespace fakecuda
