// fake_driver_probe.h: what the programs in this folder (real_paths, real_cublas, real_nccl)
// share. Each runs NVIDIA's real runtime on the fake driver (tests/fake_cuda) and prints one line
// per step, then the driver's own counters (tests/fake_cuda/include/fakecuda.h), read from the
// libcuda.so.1 the runtime loaded; the e2e test (tests/e2e/real_runtime_test.cpp) reads them.
// Nothing here allocates GPU memory: the allocations stay in each program's own functions.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <initializer_list>

namespace fake_driver_probe {

// How many steps returned a status other than 0.
inline int g_failures = 0;

// One line, "WHAT STATUS"; a status other than 0 (cudaError_t, cublasStatus_t, ncclResult_t) counts
// as a failure.
inline void step(const char* what, int status) {
    std::printf("%s %d\n", what, status);
    if (status != 0) ++g_failures;
}

// The fake driver's counters; each null where the driver is not loaded or lacks it.
struct FakeDriver {
    long (*calls)(const char*) = nullptr;             // fakecuda_calls
    unsigned long long (*device_used)(int) = nullptr; // fakecuda_device_used
    unsigned long long (*pinned_used)() = nullptr;    // fakecuda_host_pinned_used
};

// The counters of the driver already loaded. The runtime loads the driver on its first call, so
// call this after one: the counters are read from that copy, never from one loaded here.
inline FakeDriver find_fake_driver() {
    FakeDriver d;
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver == nullptr) return d;
    d.calls = reinterpret_cast<long (*)(const char*)>(dlsym(driver, "fakecuda_calls"));
    d.device_used =
        reinterpret_cast<unsigned long long (*)(int)>(dlsym(driver, "fakecuda_device_used"));
    d.pinned_used =
        reinterpret_cast<unsigned long long (*)()>(dlsym(driver, "fakecuda_host_pinned_used"));
    return d;
}

// Kernel launches so far, through every launch entry point. Needs d.calls.
inline long kernel_launches(const FakeDriver& d) {
    long n = 0;
    for (const char* f : {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                          "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel"})
        n += d.calls(f);
    return n;
}

// One line, "driver-calls NAME=N ...", with the driver's count of each entry point in `names`, in
// that order. Needs d.calls.
inline void print_driver_calls(const FakeDriver& d, std::initializer_list<const char*> names) {
    std::printf("driver-calls");
    for (const char* n : names)
        std::printf(" %s=%ld", n, d.calls(n));
    std::printf("\n");
}

} // namespace fake_driver_probe
