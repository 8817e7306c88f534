// real_cublas: cuBLAS 13 on the fake driver: cublasCreate (which allocates its own workspace),
// three matrices from the program, one SGEMM, cublasDestroy. The e2e test checks that cuBLAS's own
// allocations are traced and attributed to the cuBLAS call that made them, that the program's are
// its own, and that the trace's counts equal the driver's.
//
// Ground truth: real_cublas_matrices allocates 3 x 64 x 64 floats (16384 bytes each) with
// cudaMalloc and frees them; whatever cuBLAS allocates inside cublasCreate / cublasSgemm is freed
// by cublasDestroy. Output: one line per step (name and status), then the driver's own counts. Exit
// status 0 unless the driver's counters cannot be read: a cuBLAS status is data for the test (on
// the fake driver cublasCreate still answers 14, CUBLAS_STATUS_INTERNAL_ERROR; see
// tests/fake_cuda/README.md), compared between the runs with and without the tracer.
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
    cublasHandle_t h = nullptr;
    step("cublasCreate", cublasCreate(&h));
    float *a = nullptr, *b = nullptr, *c = nullptr;
    real_cublas_matrices(&a, &b, &c);
    real_cublas_gemm(h, a, b, c);
    step("cublasDestroy", cublasDestroy(h));
    for (float* m : {a, b, c})
        step("cudaFree", cudaFree(m));
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto calls =
        driver ? reinterpret_cast<long (*)(const char*)>(dlsym(driver, "fakecuda_calls")) : nullptr;
    if (!calls) {
        std::printf("driver-calls unavailable\n");
        return 1;
    }
    std::printf("driver-calls");
    for (const char* n :
         {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemAllocFromPoolAsync",
          "cuMemAllocFromPoolAsync_ptsz", "cuMemAllocManaged", "cuMemHostAlloc",
          "cuMemAllocHost_v2", "cuMemAllocPitch_v2", "cuMemFree_v2", "cuMemFreeAsync",
          "cuMemFreeAsync_ptsz", "cuMemFreeHost", "cuMemCreate", "cuMemRelease"})
        std::printf(" %s=%ld", n, calls(n));
    std::printf("\n");
    std::printf("failures %d\n", g_failures);
    return 0;
}
