// Driver-wide state that is not memory: cuInit, the device list, the per-thread current device
// and the primary-context handles that stand for it.
#pragma once

#include "cuda_api.hpp"

namespace fakecuda {

// CUDA_SUCCESS once cuInit has succeeded; CUDA_ERROR_NOT_INITIALIZED before, as the real driver
// answers almost every entry point.
CUresult init_status() noexcept;
CUresult initialize() noexcept;

bool valid_device(int device) noexcept;
int device_count() noexcept;

// Per thread, default 0. The fake has no context stack: a thread's context is its device's primary
// context, so cuCtxGetDevice always succeeds.
int current_device() noexcept;
void set_current_device(int device) noexcept;

CUcontext primary_context(int device) noexcept;
// -1 for a handle that is not one of ours.
int device_of_context(CUcontext ctx) noexcept;

// What cuDeviceGetUuid and the PCI attributes report (the integrity check hashes both).
void device_uuid(int device, CUuuid* uuid) noexcept;
void device_pci(int device, int* domain, int* bus, int* dev) noexcept;

} // namespace fakecuda
