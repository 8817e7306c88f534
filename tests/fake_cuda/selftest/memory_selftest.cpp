// Checks the fake driver's memory semantics that the end-to-end tests rely on. Run with
// FAKECUDA_CAPACITY=67108864 (64 MiB) and FAKECUDA_DEVICES=2.
#include "../driver/cuda_api.hpp"
#include "fakecuda.h"
#include "selftest.hpp"

#include <cstdint>
#include <thread>

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kCapacity = 64 * kMiB;
constexpr std::size_t kGranularity = 2 * kMiB;

void check_requires_init() {
    CUdeviceptr p = 7;
    SELFTEST_CHECK(cuMemAlloc_v2(&p, 16) == CUDA_ERROR_NOT_INITIALIZED && p == 7);
    int version = 0;
    SELFTEST_CHECK(cuDriverGetVersion(&version) == CUDA_SUCCESS && version == 13000);
    SELFTEST_CHECK(cuInit(0) == CUDA_SUCCESS);
}

void check_linear() {
    CUdeviceptr p = 7;
    SELFTEST_CHECK(cuMemAlloc_v2(&p, 0) == CUDA_ERROR_INVALID_VALUE && p == 7);
    SELFTEST_CHECK(cuMemAlloc_v2(&p, kCapacity + 1) == CUDA_ERROR_OUT_OF_MEMORY && p == 7);
    SELFTEST_CHECK(cuMemAlloc_v2(&p, kMiB) == CUDA_SUCCESS && p != 7);
    std::size_t free_bytes = 0;
    std::size_t total = 0;
    SELFTEST_CHECK(cuMemGetInfo_v2(&free_bytes, &total) == CUDA_SUCCESS);
    SELFTEST_CHECK(total == kCapacity && free_bytes == kCapacity - kMiB);
    SELFTEST_CHECK(cuMemFreeHost(reinterpret_cast<void*>(p)) == CUDA_ERROR_INVALID_VALUE);
    SELFTEST_CHECK(cuMemFree_v2(p) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuMemFree_v2(p) == CUDA_ERROR_INVALID_VALUE);
    SELFTEST_CHECK(cuMemFree_v2(0) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuMemFree_v2(0xdead0000) == CUDA_ERROR_INVALID_VALUE);
    SELFTEST_CHECK(fakecuda_device_used(0) == 0 && fakecuda_device_peak(0) == kMiB);

    // The legacy ABI hands out 32-bit pointers.
    CUdeviceptr_v1 legacy = 0;
    SELFTEST_CHECK(cuMemAlloc(&legacy, 4096) == CUDA_SUCCESS && legacy != 0);
    SELFTEST_CHECK(cuMemFree(legacy) == CUDA_SUCCESS);

    std::size_t pitch = 0;
    SELFTEST_CHECK(cuMemAllocPitch_v2(&p, &pitch, 513, 3, 4) == CUDA_SUCCESS && pitch == 1024);
    SELFTEST_CHECK(fakecuda_device_used(0) == 3 * 1024);
    SELFTEST_CHECK(cuMemFree_v2(p) == CUDA_SUCCESS);

    // Managed and pinned memory are not charged against the device.
    SELFTEST_CHECK(cuMemAllocManaged(&p, kCapacity + 1, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    SELFTEST_CHECK(fakecuda_managed_used() == kCapacity + 1 && fakecuda_device_used(0) == 0);
    SELFTEST_CHECK(cuMemFree_v2(p) == CUDA_SUCCESS && fakecuda_managed_used() == 0);
    void* host = nullptr;
    SELFTEST_CHECK(cuMemHostAlloc(&host, 100, 0) == CUDA_SUCCESS &&
                   fakecuda_host_pinned_used() == 100);
    SELFTEST_CHECK(cuMemFree_v2(reinterpret_cast<CUdeviceptr>(host)) == CUDA_ERROR_INVALID_VALUE);
    SELFTEST_CHECK(cuMemFreeHost(host) == CUDA_SUCCESS && fakecuda_host_pinned_used() == 0);
}

void check_devices_and_pools() {
    int count = 0;
    SELFTEST_CHECK(cuDeviceGetCount(&count) == CUDA_SUCCESS && count == 2);
    CUcontext ctx1 = nullptr;
    SELFTEST_CHECK(cuDevicePrimaryCtxRetain(&ctx1, 1) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuCtxSetCurrent(ctx1) == CUDA_SUCCESS);
    CUdevice device = -1;
    SELFTEST_CHECK(cuCtxGetDevice(&device) == CUDA_SUCCESS && device == 1);
    CUdeviceptr p = 0;
    SELFTEST_CHECK(cuMemAllocAsync(&p, kMiB, nullptr) == CUDA_SUCCESS);
    SELFTEST_CHECK(fakecuda_device_used(1) == kMiB && fakecuda_device_used(0) == 0);
    // The current device is per thread: a new thread starts on device 0.
    std::thread([] {
        CUdevice d = -1;
        SELFTEST_CHECK(cuCtxGetDevice(&d) == CUDA_SUCCESS && d == 0);
    }).join();
    SELFTEST_CHECK(cuMemFreeAsync_ptsz(p, CU_STREAM_PER_THREAD) == CUDA_SUCCESS &&
                   fakecuda_device_used(1) == 0);

    CUmemoryPool pool0 = nullptr;
    SELFTEST_CHECK(cuDeviceGetDefaultMemPool(&pool0, 0) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuMemAllocFromPoolAsync(&p, kMiB, pool0, nullptr) == CUDA_SUCCESS);
    SELFTEST_CHECK(fakecuda_device_used(0) == kMiB); // the pool's device, not the current one
    SELFTEST_CHECK(cuMemFree_v2(p) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuCtxSetCurrent(nullptr) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuCtxGetDevice(&device) == CUDA_SUCCESS && device == 0);
}

void check_vmm() {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    std::size_t granularity = 0;
    SELFTEST_CHECK(cuMemGetAllocationGranularity(
                       &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS &&
                   granularity == kGranularity);
    CUmemGenericAllocationHandle h = 0;
    SELFTEST_CHECK(cuMemCreate(&h, kGranularity + 1, &prop, 0) == CUDA_ERROR_INVALID_VALUE);
    SELFTEST_CHECK(cuMemCreate(&h, kCapacity + kGranularity, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY);
    SELFTEST_CHECK(cuMemCreate(&h, 2 * kGranularity, &prop, 0) == CUDA_SUCCESS);
    SELFTEST_CHECK(fakecuda_device_used(0) == 2 * kGranularity);

    CUdeviceptr va = 0;
    SELFTEST_CHECK(cuMemAddressReserve(&va, 4 * kGranularity, 0, 0, 0) == CUDA_SUCCESS);
    SELFTEST_CHECK(va % kGranularity == 0);
    SELFTEST_CHECK(fakecuda_device_used(0) == 2 * kGranularity); // address space costs nothing
    SELFTEST_CHECK(cuMemMap(va, 2 * kGranularity, 0, h, 0) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuMemMap(va + kGranularity, 2 * kGranularity, 0, h, 0) ==
                   CUDA_ERROR_INVALID_VALUE); // overlap
    CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    SELFTEST_CHECK(cuMemSetAccess(va, 2 * kGranularity, &access, 1) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuMemSetAccess(va, 3 * kGranularity, &access, 1) ==
                   CUDA_ERROR_INVALID_VALUE); // unmapped tail

    // NCCL's sequence: the first Release leaves the memory alive because it is still mapped.
    CUmemGenericAllocationHandle retained = 0;
    SELFTEST_CHECK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va + 100)) ==
                   CUDA_SUCCESS);
    SELFTEST_CHECK(retained == h);
    SELFTEST_CHECK(cuMemRelease(retained) == CUDA_SUCCESS);
    SELFTEST_CHECK(cuMemRelease(h) == CUDA_SUCCESS); // references 0, still mapped
    SELFTEST_CHECK(fakecuda_device_used(0) == 2 * kGranularity);
    SELFTEST_CHECK(cuMemRelease(h) == CUDA_ERROR_INVALID_VALUE); // nothing left to release
    SELFTEST_CHECK(cuMemUnmap(va, kGranularity) == CUDA_ERROR_INVALID_VALUE); // not a whole mapping
    SELFTEST_CHECK(cuMemUnmap(va, 2 * kGranularity) == CUDA_SUCCESS);
    SELFTEST_CHECK(fakecuda_device_used(0) == 0);
    SELFTEST_CHECK(cuMemMap(va, 2 * kGranularity, 0, h, 0) == CUDA_ERROR_INVALID_HANDLE); // gone
    SELFTEST_CHECK(cuMemAddressFree(va, 4 * kGranularity) == CUDA_SUCCESS);

    prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    SELFTEST_CHECK(cuMemCreate(&h, kGranularity, &prop, 0) == CUDA_SUCCESS);
    SELFTEST_CHECK(fakecuda_host_pinned_used() == kGranularity && fakecuda_device_used(0) == 0);
    SELFTEST_CHECK(cuMemRelease(h) == CUDA_SUCCESS && fakecuda_host_pinned_used() == 0);
}

void check_misc() {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    SELFTEST_CHECK(cuStreamIsCapturing(nullptr, &status) == CUDA_SUCCESS &&
                   status == CU_STREAM_CAPTURE_STATUS_NONE);
    const void* table = &status;
    SELFTEST_CHECK(cuGetExportTable(&table, nullptr) == CUDA_ERROR_NOT_SUPPORTED);
    const char* text = nullptr;
    SELFTEST_CHECK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text) == CUDA_SUCCESS &&
                   text != nullptr);
    SELFTEST_CHECK(cuGetErrorString(static_cast<CUresult>(12345), &text) ==
                       CUDA_ERROR_INVALID_VALUE &&
                   text == nullptr);
}

} // namespace

int main() {
    check_requires_init();
    check_linear();
    check_devices_and_pools();
    check_vmm();
    check_misc();
    return 0;
}
