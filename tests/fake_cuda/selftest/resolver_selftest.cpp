// Checks the fake driver's cuGetProcAddress against the routing rules of cudaTypedefs.h and what
// the real driver answers (runtime/real_cudart13_handshake.txt): every ordinary answer is the
// exported variant dlsym() finds under that exact name; the self-query answers are distinct,
// non-exported resolvers with their own counters.
#include "../driver/cuda_api.hpp"
#include "fakecuda.h"
#include "selftest.hpp"
#include <cudaTypedefs.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace {

void* g_libcuda = nullptr;

struct Case {
    const char* name;
    int version;
    cuuint64_t flags;
    const char* expected; // exported symbol the answer must be
};

constexpr cuuint64_t kPtds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
constexpr cuuint64_t kLegacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM;

constexpr Case kCases[] = {
    {"cuInit", 2000, 0, "cuInit"},
    {"cuMemAlloc", 2000, 0, "cuMemAlloc"},
    {"cuMemAlloc", 3010, 0, "cuMemAlloc"},
    {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
    {"cuMemAlloc", 13000, kPtds, "cuMemAlloc_v2"},
    {"cuMemFree", 2000, 0, "cuMemFree"},
    {"cuMemFree", 3020, 0, "cuMemFree_v2"},
    {"cuMemAllocPitch", 3020, 0, "cuMemAllocPitch_v2"},
    {"cuMemAllocHost", 2000, 0, "cuMemAllocHost"},
    {"cuMemAllocHost", 3020, 0, "cuMemAllocHost_v2"},
    {"cuMemHostAlloc", 2020, 0, "cuMemHostAlloc"},
    {"cuMemFreeHost", 2000, 0, "cuMemFreeHost"},
    {"cuMemGetInfo", 2000, 0, "cuMemGetInfo"},
    {"cuMemGetInfo", 3020, 0, "cuMemGetInfo_v2"},
    {"cuMemAllocManaged", 6000, 0, "cuMemAllocManaged"},
    {"cuMemAllocAsync", 11020, 0, "cuMemAllocAsync"},
    {"cuMemAllocAsync", 11020, kLegacy, "cuMemAllocAsync"},
    {"cuMemAllocAsync", 11020, kPtds, "cuMemAllocAsync_ptsz"},
    {"cuMemAllocAsync", 12000, kPtds, "cuMemAllocAsync_ptsz"},
    {"cuMemAllocFromPoolAsync", 11020, 0, "cuMemAllocFromPoolAsync"},
    {"cuMemAllocFromPoolAsync", 11020, kPtds, "cuMemAllocFromPoolAsync_ptsz"},
    {"cuMemFreeAsync", 11020, 0, "cuMemFreeAsync"},
    {"cuMemFreeAsync", 11020, kPtds, "cuMemFreeAsync_ptsz"},
    {"cuStreamIsCapturing", 10000, 0, "cuStreamIsCapturing"},
    {"cuStreamIsCapturing", 10000, kPtds, "cuStreamIsCapturing_ptsz"},
    {"cuMemCreate", 10020, 0, "cuMemCreate"},
    {"cuMemRetainAllocationHandle", 11000, 0, "cuMemRetainAllocationHandle"},
    {"cuCtxGetDevice", 2000, 0, "cuCtxGetDevice"},
    {"cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2"},
    {"cuDevicePrimaryCtxRelease", 7000, 0, "cuDevicePrimaryCtxRelease"},
    {"cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2"},
    {"cuGetExportTable", 3000, 0, "cuGetExportTable"},
};

void check_routes() {
    for (const Case& c : kCases) {
        void* fn = nullptr;
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        SELFTEST_CHECK(cuGetProcAddress_v2(c.name, &fn, c.version, c.flags, &status) ==
                       CUDA_SUCCESS);
        SELFTEST_CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
        SELFTEST_CHECK(fn != nullptr && fn == dlsym(g_libcuda, c.expected));
        Dl_info info{};
        SELFTEST_CHECK(dladdr(fn, &info) != 0 && info.dli_sname != nullptr &&
                       std::strcmp(info.dli_sname, c.expected) == 0);
        void* via_v1 = nullptr;
        SELFTEST_CHECK(cuGetProcAddress(c.name, &via_v1, c.version, c.flags) == CUDA_SUCCESS &&
                       via_v1 == fn);
    }
}

void expect_failure(const char* name, int version, cuuint64_t flags, CUresult rc,
                    CUdriverProcAddressQueryResult expected_status) {
    void* fn = &g_libcuda;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    SELFTEST_CHECK(cuGetProcAddress_v2(name, &fn, version, flags, &status) == rc);
    SELFTEST_CHECK(fn == nullptr);
    SELFTEST_CHECK(status == expected_status);
}

void check_failures() {
    expect_failure("", 0, 0, CUDA_ERROR_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    expect_failure("cuNoSuchFunction", 12000, 0, CUDA_ERROR_NOT_FOUND,
                   CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    // Names are base names: an ABI-suffixed name is not a symbol the resolver knows.
    expect_failure("cuMemAlloc_v2", 12000, 0, CUDA_ERROR_NOT_FOUND,
                   CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    expect_failure("cuMemAlloc", 1000, 0, CUDA_ERROR_NOT_FOUND,
                   CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    expect_failure("cuMemAllocAsync", 11010, kPtds, CUDA_ERROR_NOT_FOUND,
                   CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    expect_failure("cuGetProcAddress", 11020, 0, CUDA_ERROR_NOT_FOUND,
                   CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    // A version above the driver's is an argument error: the status is left as it was.
    expect_failure("cuMemAlloc", 13010, 0, CUDA_ERROR_INVALID_VALUE, CU_GET_PROC_ADDRESS_SUCCESS);
    expect_failure("cuMemAlloc", 12000, 4, CUDA_ERROR_INVALID_VALUE, CU_GET_PROC_ADDRESS_SUCCESS);
}

void check_self_queries() {
    void* self_v1 = nullptr;
    void* self_v2 = nullptr;
    void* again_v2 = nullptr;
    SELFTEST_CHECK(cuGetProcAddress_v2("cuGetProcAddress", &self_v1, 11030, 0, nullptr) ==
                   CUDA_SUCCESS);
    SELFTEST_CHECK(cuGetProcAddress_v2("cuGetProcAddress", &self_v2, 12000, 0, nullptr) ==
                   CUDA_SUCCESS);
    SELFTEST_CHECK(cuGetProcAddress_v2("cuGetProcAddress", &again_v2, 13000, kPtds, nullptr) ==
                   CUDA_SUCCESS);
    SELFTEST_CHECK(again_v2 == self_v2);
    void* const exported_v1 = dlsym(g_libcuda, "cuGetProcAddress");
    void* const exported_v2 = dlsym(g_libcuda, "cuGetProcAddress_v2");
    SELFTEST_CHECK(self_v1 != nullptr && self_v2 != nullptr && self_v1 != self_v2);
    SELFTEST_CHECK(self_v1 != exported_v1 && self_v1 != exported_v2);
    SELFTEST_CHECK(self_v2 != exported_v1 && self_v2 != exported_v2);
    // Not exported: dladdr can name at most some other (preceding) exported symbol.
    Dl_info info{};
    SELFTEST_CHECK(dladdr(self_v2, &info) != 0);
    SELFTEST_CHECK(info.dli_saddr != self_v2);

    const long v1_before = fakecuda_calls("resolver_self_v1");
    const long v2_before = fakecuda_calls("resolver_self_v2");
    const long exported_before = fakecuda_calls("cuGetProcAddress_v2");
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
    SELFTEST_CHECK(reinterpret_cast<PFN_cuGetProcAddress_v12000>(self_v2)(
                       "cuMemAlloc", &fn, 3020, 0, &status) == CUDA_SUCCESS);
    SELFTEST_CHECK(fn == dlsym(g_libcuda, "cuMemAlloc_v2"));
    SELFTEST_CHECK(reinterpret_cast<PFN_cuGetProcAddress_v11030>(self_v1)(
                       "cuMemAllocAsync", &fn, 11020, kPtds) == CUDA_SUCCESS);
    SELFTEST_CHECK(fn == dlsym(g_libcuda, "cuMemAllocAsync_ptsz"));
    SELFTEST_CHECK(fakecuda_calls("resolver_self_v1") == v1_before + 1);
    SELFTEST_CHECK(fakecuda_calls("resolver_self_v2") == v2_before + 1);
    SELFTEST_CHECK(fakecuda_calls("cuGetProcAddress_v2") == exported_before);
    SELFTEST_CHECK(fakecuda_calls("noSuchFunction") == -1);
}

// FAKECUDA_HIDDEN_POINTERS=1: every answer is a function no exported name covers, and calling it
// is calling the variant the name routes to (its own counter moves, its result comes back).
void check_hidden_routes() {
    for (const Case& c : kCases) {
        void* fn = nullptr;
        SELFTEST_CHECK(cuGetProcAddress_v2(c.name, &fn, c.version, c.flags, nullptr) ==
                       CUDA_SUCCESS);
        SELFTEST_CHECK(fn != nullptr && fn != dlsym(g_libcuda, c.expected));
        Dl_info info{};
        SELFTEST_CHECK(dladdr(fn, &info) == 0 || info.dli_saddr != fn);
    }
    void* init = nullptr;
    void* alloc = nullptr;
    void* release = nullptr;
    SELFTEST_CHECK(cuGetProcAddress_v2("cuInit", &init, 12000, 0, nullptr) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuGetProcAddress_v2("cuMemAlloc", &alloc, 12000, 0, nullptr) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuGetProcAddress_v2("cuMemFree", &release, 12000, 0, nullptr) == CUDA_SUCCESS);
    SELFTEST_CHECK(reinterpret_cast<PFN_cuInit_v2000>(init)(0) == CUDA_SUCCESS);
    CUdevice device = 0;
    CUcontext context = nullptr;
    SELFTEST_CHECK(cuDeviceGet(&device, 0) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuDevicePrimaryCtxRetain(&context, device) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuCtxSetCurrent(context) == CUDA_SUCCESS);
    const long allocs_before = fakecuda_calls("cuMemAlloc_v2");
    const unsigned long long used_before = fakecuda_device_used(0);
    CUdeviceptr p = 0;
    SELFTEST_CHECK(reinterpret_cast<PFN_cuMemAlloc_v3020>(alloc)(&p, 4096) == CUDA_SUCCESS);
    SELFTEST_CHECK(p != 0 && fakecuda_calls("cuMemAlloc_v2") == allocs_before + 1);
    SELFTEST_CHECK(fakecuda_device_used(0) == used_before + 4096);
    SELFTEST_CHECK(reinterpret_cast<PFN_cuMemFree_v3020>(release)(p) == CUDA_SUCCESS);
    SELFTEST_CHECK(fakecuda_device_used(0) == used_before);
    // An argument error is still the callee's to report.
    SELFTEST_CHECK(reinterpret_cast<PFN_cuMemFree_v3020>(release)(p) == CUDA_ERROR_INVALID_VALUE);
}

} // namespace

int main() {
    g_libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    SELFTEST_CHECK(g_libcuda != nullptr);
    if (const char* hidden = std::getenv("FAKECUDA_HIDDEN_POINTERS");
        hidden && std::strcmp(hidden, "1") == 0) {
        check_hidden_routes();
        return 0;
    }
    check_routes();
    check_failures();
    check_self_queries();
    return 0;
}
