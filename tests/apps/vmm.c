/* vmm: the virtual-memory-management family (cuMemCreate, cuMemAddressReserve, cuMemMap,
 * cuMemSetAccess), which cudart never calls: it comes from applications and from libraries such as
 * NCCL and PyTorch's expandable segments. Physical memory is what counts, from cuMemCreate until
 * its reference count is 0 AND it is no longer mapped; reservations are address space only.
 * G = 2 MiB = 2097152, the granularity the fake (like real GPUs) reports.
 *
 * Ground truth (sizes in bytes):
 *   vmm_nccl_alloc / vmm_nccl_free   DEVICE 0, 6291456 (3G): create, reserve, map, set access;
 *       freed NCCL-style: Retain(addr) -> Release -> Unmap -> Release -> AddressFree.
 *       The physical memory is freed at the last Release (refs 0, no mapping left).
 *   vmm_mapped_leak                  DEVICE 0, 10485760 (5G): create, reserve, map, set access;
 * leaked. vmm_release_before_unmap         DEVICE 0, 14680064 (7G): create, reserve, map, set
 * access, Release while mapped (still live), then Unmap (freed HERE), AddressFree. vmm_host_leak
 * HOST, 4194304 (2G): create, reserve, map, set access; leaked (pinned host memory, not device).
 *   vmm_host_numa_transient          HOST_NUMA node 0, 2097152 (G): create, release (never mapped).
 * Totals: 5 allocations (3 dev, 2 pinned), 3 frees (2 dev, 1 pinned).
 * Live at end: dev 1 block, 10485760 bytes; pinned 4194304.
 * Device peak: 25165824 (vmm_mapped_leak + vmm_release_before_unmap, until its unmap). */
#include "app_check.h"

#include <cuda.h>

#define G ((size_t)2 << 20)

struct Mapped {
    CUdeviceptr va;
    size_t size;
    CUmemGenericAllocationHandle handle;
};

static CUmemAllocationProp prop_at(CUmemLocationType type, int id) {
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = type;
    prop.location.id = id;
    return prop;
}

/* What every mapping needs after cuMemCreate. Each named function below calls cuMemCreate itself,
 * so the allocation's innermost program frame is that function, not a shared helper. */
static struct Mapped reserve_and_map(CUmemGenericAllocationHandle handle, size_t size) {
    struct Mapped m = {0, size, handle};
    APP_OK(cuMemAddressReserve(&m.va, size, 0, 0, 0));
    APP_OK(cuMemMap(m.va, size, 0, handle, 0));
    CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    APP_OK(cuMemSetAccess(m.va, size, &access, 1));
    return m;
}

__attribute__((noinline)) struct Mapped vmm_nccl_alloc(void) {
    const CUmemAllocationProp prop = prop_at(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    size_t granularity = 0;
    APP_OK(
        cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    APP_CHECK(granularity == G, "granularity %zu, expected %zu", granularity, G);
    CUmemGenericAllocationHandle handle = 0;
    APP_OK(cuMemCreate(&handle, 3 * G, &prop, 0));
    return reserve_and_map(handle, 3 * G);
}

/* NCCL's ncclCuMemFree (src/include/alloc.h): it only has the address, so it retains a handle
 * first, and the memory survives the first Release because the mapping still holds it. */
__attribute__((noinline)) void vmm_nccl_free(CUdeviceptr va, size_t size) {
    CUmemGenericAllocationHandle handle = 0;
    APP_OK(cuMemRetainAllocationHandle(&handle, (void*)va));
    APP_OK(cuMemRelease(handle));
    APP_OK(cuMemUnmap(va, size));
    APP_OK(cuMemRelease(handle));
    APP_OK(cuMemAddressFree(va, size));
}

__attribute__((noinline)) struct Mapped vmm_mapped_leak(void) {
    const CUmemAllocationProp prop = prop_at(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    CUmemGenericAllocationHandle handle = 0;
    APP_OK(cuMemCreate(&handle, 5 * G, &prop, 0));
    return reserve_and_map(handle, 5 * G);
}

__attribute__((noinline)) void vmm_release_before_unmap(void) {
    const CUmemAllocationProp prop = prop_at(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    CUmemGenericAllocationHandle handle = 0;
    APP_OK(cuMemCreate(&handle, 7 * G, &prop, 0));
    const struct Mapped m = reserve_and_map(handle, 7 * G);
    app_expect_device_used(0, 5 * G + 7 * G);
    APP_OK(cuMemRelease(m.handle));
    app_expect_device_used(0, 5 * G + 7 * G); /* still mapped, so still allocated */
    APP_OK(cuMemUnmap(m.va, m.size));
    app_expect_device_used(0, 5 * G);
    APP_OK(cuMemAddressFree(m.va, m.size));
}

__attribute__((noinline)) struct Mapped vmm_host_leak(void) {
    const CUmemAllocationProp prop = prop_at(CU_MEM_LOCATION_TYPE_HOST, 0);
    CUmemGenericAllocationHandle handle = 0;
    APP_OK(cuMemCreate(&handle, 2 * G, &prop, 0));
    return reserve_and_map(handle, 2 * G);
}

__attribute__((noinline)) void vmm_host_numa_transient(void) {
    const CUmemAllocationProp prop = prop_at(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
    CUmemGenericAllocationHandle handle = 0;
    APP_OK(cuMemCreate(&handle, G, &prop, 0));
    APP_OK(cuMemRelease(handle));
}

int main(void) {
    APP_OK(cuInit(0));

    const struct Mapped nccl = vmm_nccl_alloc();
    vmm_mapped_leak();
    app_expect_device_used(0, 3 * G + 5 * G);
    vmm_nccl_free(nccl.va, nccl.size);
    app_expect_device_used(0, 5 * G);

    vmm_release_before_unmap();
    vmm_host_leak();
    vmm_host_numa_transient();

    app_expect_calls("cuMemCreate", 5);
    app_expect_calls("cuMemRelease", 4);
    app_expect_calls("cuMemRetainAllocationHandle", 1);
    app_expect_calls("cuMemMap", 4);
    app_expect_calls("cuMemUnmap", 2);
    app_expect_device_used(0, 5 * G);
    app_expect_device_peak(0, 12 * G);
    app_expect_pinned_used(2 * G);
    return 0;
}
