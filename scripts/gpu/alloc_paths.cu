// alloc_paths: the allocation paths a plain CUDA C++ program takes, each from its own uniquely
// named noinline function with a size no other call uses, so the report's sites can be matched to
// them one by one. gpu-validate.sh builds it twice, against the shared cudart (`-cudart shared`:
// cudaMalloc is an interposable export) and the static one (the default: cudart inside the
// executable reaches the driver only through cuGetProcAddress), and runs both under the preload.
//
// It prints its own ground truth as one JSON object on stdout: what gpuleak-report's JSON must say.
// Only device memory counts in live_bytes_end; pinned host memory has its own counters. Exit 0 =
// every call succeeded; 1 = a CUDA call failed (named on stderr).
//
// It uses only calls the fake runtime of the test suite also has (no kernels, no streams of its
// own), so the same binary can be checked without a GPU against build/tests/fake.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

void fail(const char* what, const char* error) {
    std::fprintf(stderr, "alloc_paths: %s failed: %s\n", what, error);
    std::exit(1);
}

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) fail(what, cudaGetErrorString(e));
}

void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        fail(what, name ? name : "unknown CUresult");
    }
}

// One expected site of the report, keyed by its headline function.
struct SiteTruth {
    std::string function;
    std::string kind;              // as the report names it: "device" or "pinned_host"
    std::vector<std::string> apis; // any one of them may name the call: runtime tag or driver entry
    int allocations = 0;
    int frees = 0;
    uint64_t bytes_allocated = 0;
    int live_count_end = 0;
    uint64_t live_bytes_end = 0;
};

std::vector<SiteTruth> g_truth;

// A function that allocated once and freed what it allocated.
void expect_pair(const char* function, const char* kind, std::vector<std::string> apis,
                 uint64_t bytes) {
    g_truth.push_back({function, kind, std::move(apis), 1, 1, bytes, 0, 0});
}

// A function called `count` times that kept each device allocation.
void expect_leak(const char* function, std::vector<std::string> apis, int count, uint64_t each) {
    g_truth.push_back(
        {function, "device", std::move(apis), count, 0, count * each, count, count * each});
}

constexpr uint64_t kDeviceBytes = 3000017;
constexpr uint64_t kAsyncBytes = 5000011;
constexpr uint64_t kPinnedBytes = 1000003;
constexpr uint64_t kLeakBytes = 7340033;
constexpr int kLeakCount = 3;

} // namespace

extern "C" {

__attribute__((noinline)) void gv_device_pair() {
    void* p = nullptr;
    check(cudaMalloc(&p, kDeviceBytes), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
    expect_pair("gv_device_pair", "device", {"cudaMalloc", "cuMemAlloc_v2"}, kDeviceBytes);
}

__attribute__((noinline)) void gv_async_pair() {
    void* p = nullptr;
    check(cudaMallocAsync(&p, kAsyncBytes, nullptr), "cudaMallocAsync");
    check(cudaFreeAsync(p, nullptr), "cudaFreeAsync");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    expect_pair("gv_async_pair", "device",
                {"cudaMallocAsync", "cuMemAllocAsync", "cuMemAllocAsync_ptsz"}, kAsyncBytes);
}

__attribute__((noinline)) void gv_pinned_pair() {
    void* p = nullptr;
    check(cudaMallocHost(&p, kPinnedBytes), "cudaMallocHost");
    check(cudaFreeHost(p), "cudaFreeHost");
    expect_pair("gv_pinned_pair", "pinned_host",
                {"cudaMallocHost", "cuMemAllocHost_v2", "cuMemHostAlloc"}, kPinnedBytes);
}

// The NCCL / expandable-segments pattern through the driver API (bound directly, -lcuda).
// Physical memory is the allocation; the address reservation is not memory.
__attribute__((noinline)) void gv_vmm_pair() {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    size_t granularity = 0;
    check(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
          "cuMemGetAllocationGranularity");
    const size_t size = 3 * granularity;
    CUmemGenericAllocationHandle handle = 0;
    check(cuMemCreate(&handle, size, &prop, 0), "cuMemCreate");
    CUdeviceptr va = 0;
    check(cuMemAddressReserve(&va, size, 0, 0, 0), "cuMemAddressReserve");
    check(cuMemMap(va, size, 0, handle, 0), "cuMemMap");
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(cuMemSetAccess(va, size, &access, 1), "cuMemSetAccess");
    check(cuMemUnmap(va, size), "cuMemUnmap");
    check(cuMemRelease(handle), "cuMemRelease");
    check(cuMemAddressFree(va, size), "cuMemAddressFree");
    expect_pair("gv_vmm_pair", "device", {"cuMemCreate"}, size);
}

// The deliberate leak: the report's leaking site must be headed by this function.
__attribute__((noinline)) void* gpu_validate_leaky_cache_fill() {
    void* p = nullptr;
    check(cudaMalloc(&p, kLeakBytes), "cudaMalloc (leak)");
    return p;
}

} // extern "C"

namespace {

std::string json_string_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? ",\"" : "\"") + items[i] + "\"";
    return out + "]";
}

void print_truth(const char* cudart) {
    int allocations = 0, frees = 0, live_count = 0;
    uint64_t live_bytes = 0;
    for (const SiteTruth& s : g_truth) {
        allocations += s.allocations;
        frees += s.frees;
        if (s.kind == "device") {
            live_count += s.live_count_end;
            live_bytes += s.live_bytes_end;
        }
    }
    std::printf("{\"program\":\"alloc_paths\",\"pid\":%d,\"cudart\":\"%s\","
                "\"allocations\":%d,\"frees\":%d,\"failed_allocations\":0,"
                "\"live_count_end\":%d,\"live_bytes_end\":%" PRIu64 ",\"pinned_live_bytes_end\":0,"
                "\"leak_function\":\"gpu_validate_leaky_cache_fill\",\"sites\":[",
                static_cast<int>(getpid()), cudart, allocations, frees, live_count, live_bytes);
    for (size_t i = 0; i < g_truth.size(); ++i) {
        const SiteTruth& s = g_truth[i];
        std::printf("%s{\"function\":\"%s\",\"kind\":\"%s\",\"apis\":%s,\"allocations\":%d,"
                    "\"frees\":%d,\"bytes_allocated\":%" PRIu64 ",\"live_count_end\":%d,"
                    "\"live_bytes_end\":%" PRIu64 "}",
                    i ? "," : "", s.function.c_str(), s.kind.c_str(),
                    json_string_list(s.apis).c_str(), s.allocations, s.frees, s.bytes_allocated,
                    s.live_count_end, s.live_bytes_end);
    }
    std::printf("]}\n");
}

} // namespace

int main(int argc, char** argv) {
    const char* cudart = argc > 1 ? argv[1] : "unknown";
    check(cudaSetDevice(0), "cudaSetDevice");
    gv_device_pair();
    gv_async_pair();
    gv_pinned_pair();
    gv_vmm_pair();
    for (int i = 0; i < kLeakCount; ++i)
        gpu_validate_leaky_cache_fill();
    expect_leak("gpu_validate_leaky_cache_fill", {"cudaMalloc", "cuMemAlloc_v2"}, kLeakCount,
                kLeakBytes);
    print_truth(cudart);
    return 0;
}
