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
#include <dlfcn.h>

#include <cstdio>

namespace {

int g_failures = 0;

void step(const char* what, int status) {
    std::printf("%s %d\n", what, status);
    if (status != 0) ++g_failures;
}

constexpr int kN = 64;

long (*g_calls)(const char*) = nullptr;
unsigned long long (*g_device_used)(int) = nullptr;

long launches() {
    long n = 0;
    for (const char* f : {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                          "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel"})
        n += g_calls(f);
    return n;
}

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
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver != nullptr) {
        g_calls = reinterpret_cast<long (*)(const char*)>(dlsym(driver, "fakecuda_calls"));
        g_device_used =
            reinterpret_cast<unsigned long long (*)(int)>(dlsym(driver, "fakecuda_device_used"));
    }
    if (g_calls == nullptr || g_device_used == nullptr) {
        std::printf("driver-calls unavailable\n");
        return 1;
    }

    const unsigned long long before_create = g_device_used(0);
    const long allocs_before_create = g_calls("cuMemAlloc_v2");
    cublasHandle_t h = nullptr;
    step("cublasCreate", cublasCreate(&h));
    const unsigned long long cublas_bytes = g_device_used(0) - before_create;
    const long cublas_allocs = g_calls("cuMemAlloc_v2") - allocs_before_create;

    float *a = nullptr, *b = nullptr, *c = nullptr;
    real_cublas_matrices(&a, &b, &c);
    const long launches_before = launches();
    real_cublas_gemm(h, a, b, c);
    const long gemm_launches = launches() - launches_before;
    const unsigned long long before_destroy = g_device_used(0);
    step("cublasDestroy", cublasDestroy(h));
    const unsigned long long cublas_left = g_device_used(0) - (before_destroy - cublas_bytes);
    for (float* m : {a, b, c})
        step("cudaFree", cudaFree(m));

    std::printf("cublas-own bytes=%llu allocations=%ld\n", cublas_bytes, cublas_allocs);
    std::printf("gemm-launches %ld\n", gemm_launches);
    std::printf("cublas-left-after-destroy %llu\n", cublas_left);
    std::printf("driver-calls");
    for (const char* n :
         {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemAllocFromPoolAsync",
          "cuMemAllocFromPoolAsync_ptsz", "cuMemAllocManaged", "cuMemHostAlloc",
          "cuMemAllocHost_v2", "cuMemAllocPitch_v2", "cuMemFree_v2", "cuMemFreeAsync",
          "cuMemFreeAsync_ptsz", "cuMemFreeHost", "cuMemCreate", "cuMemRelease"})
        std::printf(" %s=%ld", n, g_calls(n));
    std::printf("\n");
    std::printf("failures %d\n", g_failures);
    return 0;
}
