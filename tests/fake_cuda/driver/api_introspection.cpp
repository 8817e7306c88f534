// The test-only exports declared in include/fakecuda.h.
#include "fakecuda.h"

#include "accounting.hpp"
#include "call_log.hpp"

long fakecuda_calls(const char* name) {
    return name == nullptr ? -1 : fakecuda::calls_of(name);
}

unsigned long long fakecuda_device_used(int device) {
    return fakecuda::device_used(device);
}

unsigned long long fakecuda_device_peak(int device) {
    return fakecuda::device_peak(device);
}

unsigned long long fakecuda_host_pinned_used(void) {
    return fakecuda::host_pinned_used();
}

unsigned long long fakecuda_managed_used(void) {
    return fakecuda::managed_used();
}

unsigned long long fakecuda_host_registered_used(void) {
    return fakecuda::host_registered_used();
}
