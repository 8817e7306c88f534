// real_cublas: cuBLAS 13 on the fake driver: cublasCreate (which allocates its own workspace),
// three matrices from the program, one SGEMM, cublasDestroy. The e2e test checks that cuBLAS's own
// allocations are traced and attributed to the cuBLAS call that made them, that the program's are
// its own, and that the trace's counts equal the driver's.
//
// Ground truth, from the driver's own counters (fakecuda_calls, fakecuda_device_used):
//   cublas-own            device bytes and cuMemAlloc_v2 calls made inside cublasCreate
//   gemm-launches         kernel launches made inside cublasSgemm (cuBLAS chose a kernel and
//                         launched it; the fake driver runs no kernel, so C is not computed and
//                         this program does not look at it)
//   cublas-left-after-destroy  device bytes cublasDestroy did not give back
//   driver-calls          allocation and free counts of the whole run
// Output: one line per step (name and status), then those lines. Exit status 0 unless the
// driver's counters cannot be read: a cuBLAS status is data for the test, compared between the
// runs with and without the tracer.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "fake_driver_probe.h"

using namespace fake_driver_probe;

namespace {

constexpr int kN = 64;

} // namespace

extern "C" {

__attribute__((noinline)) void real_cublas_matrices(float** a, float** b, float** c) {
    for (float** m : {a, b, c})
        step("cudaMalloc", cudaMalloc(m, sizeof(float) * kN * kN));
}

__attribute__((noinline)) void real_cublas_gemm(cublasHandle_t h, float* a, float* b, float* c) {
    const float one = 1.0f, zero = 0.0f;
    step("cublasSgemm",
         cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a, kN, b, kN, &zero, c, kN));
    step("cudaDeviceSynchronize", cudaDeviceSynchronize());
}

} // extern "C"

int main() {
    // The runtime loads the driver on its first call; the counters are read from that copy.
    step("cudaFree(0)", cudaFree(nullptr));
    const FakeDriver driver = find_fake_driver();
    if (driver.calls == nullptr || driver.device_used == nullptr) {
        std::printf("driver-calls unavailable\n");
        return 1;
    }

    const unsigned long long before_create = driver.device_used(0);
    const long allocs_before_create = driver.calls("cuMemAlloc_v2");
    cublasHandle_t h = nullptr;
    step("cublasCreate", cublasCreate(&h));
    const unsigned long long cublas_bytes = driver.device_used(0) - before_create;
    const long cublas_allocs = driver.calls("cuMemAlloc_v2") - allocs_before_create;

    float *a = nullptr, *b = nullptr, *c = nullptr;
    real_cublas_matrices(&a, &b, &c);
    const long launches_before = kernel_launches(driver);
    real_cublas_gemm(h, a, b, c);
    const long gemm_launches = kernel_launches(driver) - launches_before;
    const unsigned long long before_destroy = driver.device_used(0);
    step("cublasDestroy", cublasDestroy(h));
    const unsigned long long cublas_left = driver.device_used(0) - (before_destroy - cublas_bytes);
    for (float* m : {a, b, c})
        step("cudaFree", cudaFree(m));

    std::printf("cublas-own bytes=%llu allocations=%ld\n", cublas_bytes, cublas_allocs);
    std::printf("gemm-launches %ld\n", gemm_launches);
    std::printf("cublas-left-after-destroy %llu\n", cublas_left);
    print_driver_calls(driver,
                       {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz",
                        "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz",
                        "cuMemAllocManaged", "cuMemHostAlloc", "cuMemAllocHost_v2",
                        "cuMemAllocPitch_v2", "cuMemFree_v2", "cuMemFreeAsync",
                        "cuMemFreeAsync_ptsz", "cuMemFreeHost", "cuMemCreate", "cuMemRelease"});
    std::printf("failures %d\n", g_failures);
    return 0;
}
