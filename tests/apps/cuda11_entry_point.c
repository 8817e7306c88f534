/* cuda11_entry_point: a CUDA 11.3-11.8 caller of cudaGetDriverEntryPoint[_ptsz], which there takes
 * three arguments (symbol, funcPtr, flags). It calls through a four-argument function pointer whose
 * fourth argument is a poisoned, non-canonical address, so the register a CUDA 12 `driverStatus`
 * would occupy holds garbage, as it does for a real CUDA 11 program: a tracer that dereferences it
 * kills the program. Linked against the fake libcudart.so.11.0 (tests/fake_cuda/runtime11).
 *
 * Ground truth (device 0):
 *   cuda11_leak              GetDriverEntryPoint("cuMemAlloc", default)          7000011 dev leaked
 *   cuda11_ptsz_transient    GetDriverEntryPoint_ptsz("cuMemAllocAsync") [_ptsz],
 *                            GetDriverEntryPoint("cuMemFreeAsync", per-thread)    7000012 dev freed
 * Totals: 2 allocations (dev), 1 free. Live at end: 1 block, 7000011 bytes.
 * Also checked: an unknown name answers 500 (cudaErrorSymbolNotFound) and a NULL pointer.
 * Prints one line per query (return code, resolved variant) so the runs with and without a tracer
 * can be compared. */
#include "app_check.h"

#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdio.h>

/* The CUDA 11.8 declarations (cuda_runtime_api.h of 11.x). */
extern int cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags);
extern int cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                        unsigned long long flags);
extern int cudaRuntimeGetVersion(int* runtimeVersion);

typedef int (*EntryWithGarbage)(const char*, void**, unsigned long long, void*);

/* Non-canonical on x86-64 and aarch64: any access faults. */
#define POISON ((void*)(uintptr_t)0xdead00000000beefull)

static void* query(int (*entry)(const char*, void**, unsigned long long), const char* name,
                   unsigned long long flags, int expected_rc) {
    void* fn = (void*)(uintptr_t)1;
    EntryWithGarbage call = (EntryWithGarbage)(void*)entry;
    int rc = call(name, &fn, flags, POISON);
    printf("%s flags=%llu -> %d %s\n", name, flags, rc, fn ? "pointer" : "NULL");
    APP_CHECK(rc == expected_rc, "%s: returned %d, expected %d", name, rc, expected_rc);
    return fn;
}

__attribute__((noinline)) CUdeviceptr cuda11_leak(PFN_cuMemAlloc_v3020 alloc) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 7000011));
    return p;
}

__attribute__((noinline)) void cuda11_ptsz_transient(PFN_cuMemAllocAsync_v11020_ptsz alloc,
                                                     PFN_cuMemFreeAsync_v11020_ptsz release) {
    CUdeviceptr p = 0;
    APP_OK(alloc(&p, 7000012, CU_STREAM_PER_THREAD));
    APP_OK(release(p, CU_STREAM_PER_THREAD));
}

int main(void) {
    int version = 0;
    APP_OK(cudaRuntimeGetVersion(&version));
    APP_CHECK(version == 11080, "runtime version %d", version);

    void* alloc = query(cudaGetDriverEntryPoint, "cuMemAlloc", 0, 0);
    app_expect_resolved(alloc, "cuMemAlloc_v2");
    void* async = query(cudaGetDriverEntryPoint_ptsz, "cuMemAllocAsync", 0, 0);
    app_expect_resolved(async, "cuMemAllocAsync_ptsz");
    void* release = query(cudaGetDriverEntryPoint, "cuMemFreeAsync",
                          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 0);
    app_expect_resolved(release, "cuMemFreeAsync_ptsz");
    APP_CHECK(query(cudaGetDriverEntryPoint, "cuNoSuchFunction", 0, 500) == NULL,
              "unknown name resolved");
    APP_CHECK(query(cudaGetDriverEntryPoint_ptsz, "cuNoSuchFunction", 0, 500) == NULL,
              "unknown name resolved");

    CUdeviceptr kept = cuda11_leak((PFN_cuMemAlloc_v3020)alloc);
    cuda11_ptsz_transient((PFN_cuMemAllocAsync_v11020_ptsz)async,
                          (PFN_cuMemFreeAsync_v11020_ptsz)release);
    APP_CHECK(kept != 0, "no allocation");
    app_expect_calls("cuMemAlloc_v2", 1);
    app_expect_calls("cuMemAllocAsync_ptsz", 1);
    app_expect_calls("cuMemFreeAsync_ptsz", 1);
    app_expect_device_used(0, 7000011);
    printf("ok\n");
    return 0;
}
