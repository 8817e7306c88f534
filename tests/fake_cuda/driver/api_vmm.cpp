// Exported entry points for virtual memory management. cudart never calls these (its handshake,
// runtime/real_cudart13_handshake.txt, never asks for them), so they are reached only by
// applications and libraries such as NCCL or PyTorch's expandable segments.
#include "call_log.hpp"
#include "call_names.hpp"
#include "device_state.hpp"
#include "vmm_state.hpp"

using fakecuda::Call;
using fakecuda::call_id;

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                     const CUmemAllocationProp* prop, unsigned long long flags) {
    const Call call{call_id("cuMemCreate")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && flags != 0) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_create(handle, size, prop);
    return call.done(rc, "size=%zu, location.type=%d, location.id=%d, *handle=0x%llx", size,
                     prop != nullptr ? static_cast<int>(prop->location.type) : -1,
                     prop != nullptr ? prop->location.id : -1, rc == CUDA_SUCCESS ? *handle : 0ULL);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
    const Call call{call_id("cuMemRelease")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_release(handle);
    return call.done(rc, "handle=0x%llx", handle);
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
    const Call call{call_id("cuMemRetainAllocationHandle")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_retain(handle, reinterpret_cast<CUdeviceptr>(addr));
    return call.done(rc, "addr=%p, *handle=0x%llx", addr, rc == CUDA_SUCCESS ? *handle : 0ULL);
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
    const Call call{call_id("cuMemAddressReserve")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && flags != 0) rc = CUDA_ERROR_INVALID_VALUE;
    // addr is only a hint to the real driver too; the fake never honours it.
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_reserve(ptr, size, alignment);
    return call.done(rc, "size=%zu, alignment=%zu, addr=0x%llx, *ptr=0x%llx", size, alignment, addr,
                     rc == CUDA_SUCCESS ? *ptr : 0ULL);
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    const Call call{call_id("cuMemAddressFree")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_address_free(ptr, size);
    return call.done(rc, "ptr=0x%llx, size=%zu", ptr, size);
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
    const Call call{call_id("cuMemMap")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && flags != 0) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_map(ptr, size, offset, handle);
    return call.done(rc, "ptr=0x%llx, size=%zu, offset=%zu, handle=0x%llx", ptr, size, offset,
                     handle);
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
    const Call call{call_id("cuMemUnmap")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_unmap(ptr, size);
    return call.done(rc, "ptr=0x%llx, size=%zu", ptr, size);
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
    const Call call{call_id("cuMemSetAccess")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && (desc == nullptr || count == 0)) rc = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < count; ++i) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
            rc = CUDA_ERROR_INVALID_VALUE;
        else if (!fakecuda::valid_device(desc[i].location.id))
            rc = CUDA_ERROR_INVALID_DEVICE;
    }
    // Access rights are not modelled beyond requiring the range to be mapped.
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_check_mapped(ptr, size);
    return call.done(rc, "ptr=0x%llx, size=%zu, count=%zu", ptr, size, count);
}

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
    const Call call{call_id("cuMemGetAllocationGranularity")};
    CUresult rc = fakecuda::init_status();
    if (rc == CUDA_SUCCESS && granularity == nullptr) rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) rc = fakecuda::vmm_check_prop(prop);
    // Minimum and recommended coincide, which keeps test sizes simple.
    if (rc == CUDA_SUCCESS) *granularity = fakecuda::kVmmGranularity;
    return call.done(rc, "option=%d, *granularity=%zu", static_cast<int>(option),
                     rc == CUDA_SUCCESS ? *granularity : 0);
}
