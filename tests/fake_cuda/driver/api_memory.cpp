// Exported entry points for synchronous linear memory: device, pitched, managed, pinned host, and
// the legacy 32-bit ABI twins that cuGetProcAddress hands to callers asking below CUDA 3.2.
#include "accounting.hpp"
#include "call_log.hpp"
#include "call_names.hpp"
#include "config.hpp"
#include "device_state.hpp"
#include "linear_memory.hpp"

#include <cstdint>

using fakecuda::Call;
using fakecuda::call_id;
using fakecuda::Kind;
using fakecuda::mask;

namespace {

constexpr std::size_t kPitchAlignment = 512;

CUresult alloc_device(std::uintptr_t* out, std::size_t bytes, bool low32) {
    if (const CUresult rc = fakecuda::init_status(); rc != CUDA_SUCCESS) return rc;
    // The real driver rejects zero-byte requests rather than returning a unique pointer.
    if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    return fakecuda::allocate(Kind::device, fakecuda::current_device(), bytes, low32, out);
}

CUresult alloc_pitch(std::uintptr_t* out, std::size_t* pitch, std::size_t width, std::size_t height,
                     unsigned element_bytes, bool low32) {
    if (const CUresult rc = fakecuda::init_status(); rc != CUDA_SUCCESS) return rc;
    if (out == nullptr || pitch == nullptr || width == 0 || height == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (element_bytes != 4 && element_bytes != 8 && element_bytes != 16)
        return CUDA_ERROR_INVALID_VALUE;
    const std::size_t row = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
    const CUresult rc =
        fakecuda::allocate(Kind::device, fakecuda::current_device(), row * height, low32, out);
    if (rc == CUDA_SUCCESS) *pitch = row;
    return rc;
}

CUresult free_device(std::uintptr_t address) {
    if (const CUresult rc = fakecuda::init_status(); rc != CUDA_SUCCESS) return rc;
    if (address == 0) return CUDA_SUCCESS;
    return fakecuda::release(address,
                             mask(Kind::device) | mask(Kind::managed) | mask(Kind::imported));
}

CUresult alloc_host(void** pp, std::size_t bytes, bool low32) {
    if (const CUresult rc = fakecuda::init_status(); rc != CUDA_SUCCESS) return rc;
    if (pp == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    std::uintptr_t address = 0;
    const CUresult rc = fakecuda::allocate(Kind::host_pinned, -1, bytes, low32, &address);
    if (rc == CUDA_SUCCESS) *pp = reinterpret_cast<void*>(address);
    return rc;
}

void mem_info(std::size_t* free_bytes, std::size_t* total) {
    const unsigned long long capacity = fakecuda::config().capacity;
    *free_bytes = capacity - fakecuda::device_used(fakecuda::current_device());
    *total = capacity;
}

} // namespace

CUresult cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
    const Call call{call_id("cuMemAlloc")};
    std::uintptr_t address = 0;
    const CUresult rc = alloc_device(dptr == nullptr ? nullptr : &address, bytesize, true);
    if (rc == CUDA_SUCCESS) *dptr = static_cast<CUdeviceptr_v1>(address);
    return call.done(rc, "bytesize=%u, *dptr=0x%jx", bytesize,
                     static_cast<std::uintmax_t>(address));
}

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
    const Call call{call_id("cuMemAlloc_v2")};
    std::uintptr_t address = 0;
    const CUresult rc = alloc_device(dptr == nullptr ? nullptr : &address, bytesize, false);
    if (rc == CUDA_SUCCESS) *dptr = address;
    return call.done(rc, "bytesize=%zu, *dptr=0x%jx", bytesize,
                     static_cast<std::uintmax_t>(address));
}

CUresult cuMemAllocPitch(CUdeviceptr_v1* dptr, unsigned int* pPitch, unsigned int WidthInBytes,
                         unsigned int Height, unsigned int ElementSizeBytes) {
    const Call call{call_id("cuMemAllocPitch")};
    std::uintptr_t address = 0;
    std::size_t pitch = 0;
    const CUresult rc =
        alloc_pitch(dptr == nullptr ? nullptr : &address, pPitch == nullptr ? nullptr : &pitch,
                    WidthInBytes, Height, ElementSizeBytes, true);
    if (rc == CUDA_SUCCESS) {
        *dptr = static_cast<CUdeviceptr_v1>(address);
        *pPitch = static_cast<unsigned int>(pitch);
    }
    return call.done(
        rc, "WidthInBytes=%u, Height=%u, ElementSizeBytes=%u, *pPitch=%zu, *dptr=0x%jx",
        WidthInBytes, Height, ElementSizeBytes, pitch, static_cast<std::uintmax_t>(address));
}

CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes) {
    const Call call{call_id("cuMemAllocPitch_v2")};
    std::uintptr_t address = 0;
    std::size_t pitch = 0;
    const CUresult rc =
        alloc_pitch(dptr == nullptr ? nullptr : &address, pPitch == nullptr ? nullptr : &pitch,
                    WidthInBytes, Height, ElementSizeBytes, false);
    if (rc == CUDA_SUCCESS) {
        *dptr = address;
        *pPitch = pitch;
    }
    return call.done(
        rc, "WidthInBytes=%zu, Height=%zu, ElementSizeBytes=%u, *pPitch=%zu, *dptr=0x%jx",
        WidthInBytes, Height, ElementSizeBytes, pitch, static_cast<std::uintmax_t>(address));
}

CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
    const Call call{call_id("cuMemAllocManaged")};
    std::uintptr_t address = 0;
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && (dptr == nullptr || bytesize == 0 ||
                               (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)))
        rc = CUDA_ERROR_INVALID_VALUE;
    // Managed memory may oversubscribe the device, so it is not charged against the capacity.
    if (rc == CUDA_SUCCESS)
        rc = fakecuda::allocate(Kind::managed, fakecuda::current_device(), bytesize, false,
                                &address);
    if (rc == CUDA_SUCCESS) *dptr = address;
    return call.done(rc, "bytesize=%zu, flags=%u, *dptr=0x%jx", bytesize, flags,
                     static_cast<std::uintmax_t>(address));
}

CUresult cuMemFree(CUdeviceptr_v1 dptr) {
    const Call call{call_id("cuMemFree")};
    return call.done(free_device(dptr), "dptr=0x%x", dptr);
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
    const Call call{call_id("cuMemFree_v2")};
    return call.done(free_device(dptr), "dptr=0x%llx", dptr);
}

CUresult cuMemAllocHost(void** pp, unsigned int bytesize) {
    const Call call{call_id("cuMemAllocHost")};
    const CUresult rc = alloc_host(pp, bytesize, true);
    return call.done(rc, "bytesize=%u, *pp=%p", bytesize, rc == CUDA_SUCCESS ? *pp : nullptr);
}

CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
    const Call call{call_id("cuMemAllocHost_v2")};
    const CUresult rc = alloc_host(pp, bytesize, false);
    return call.done(rc, "bytesize=%zu, *pp=%p", bytesize, rc == CUDA_SUCCESS ? *pp : nullptr);
}

CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
    const Call call{call_id("cuMemHostAlloc")};
    constexpr unsigned kKnown =
        CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
    const CUresult rc =
        (Flags & ~kKnown) != 0 ? CUDA_ERROR_INVALID_VALUE : alloc_host(pp, bytesize, false);
    return call.done(rc, "bytesize=%zu, Flags=%u, *pp=%p", bytesize, Flags,
                     rc == CUDA_SUCCESS ? *pp : nullptr);
}

CUresult cuMemFreeHost(void* p) {
    const Call call{call_id("cuMemFreeHost")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS)
        rc = fakecuda::release(reinterpret_cast<std::uintptr_t>(p), mask(Kind::host_pinned));
    return call.done(rc, "p=%p", p);
}

CUresult cuMemGetInfo(unsigned int* free, unsigned int* total) {
    const Call call{call_id("cuMemGetInfo")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && (free == nullptr || total == nullptr)) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        std::size_t f = 0;
        std::size_t t = 0;
        mem_info(&f, &t);
        // The legacy ABI cannot express more than 4 GiB; saturate as the 32-bit driver did.
        constexpr std::size_t kMax = 0xffffffffU;
        *free = static_cast<unsigned int>(f < kMax ? f : kMax);
        *total = static_cast<unsigned int>(t < kMax ? t : kMax);
    }
    return call.done(rc, "*free=%u, *total=%u", rc == CUDA_SUCCESS ? *free : 0U,
                     rc == CUDA_SUCCESS ? *total : 0U);
}

CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
    const Call call{call_id("cuMemGetInfo_v2")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && (free == nullptr || total == nullptr)) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) mem_info(free, total);
    return call.done(rc, "*free=%zu, *total=%zu", rc == CUDA_SUCCESS ? *free : 0,
                     rc == CUDA_SUCCESS ? *total : 0);
}
