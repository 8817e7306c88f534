#include "vmm_state.hpp"

#include "accounting.hpp"
#include "device_state.hpp"

#include <map>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace fakecuda {
namespace {

// The bytes of a physical allocation are a memfd: each mapping of it maps that file at its
// offset, so two mappings of one handle share their contents, as on a GPU, and pages exist only
// once touched.
struct Physical {
    std::size_t bytes;
    bool on_device;
    int device;
    long references;
    long mappings;
    int fd;
};

struct Reservation {
    std::size_t bytes;
    void* region; // the PROT_NONE mmap that keeps the range from being handed out twice
    std::size_t region_bytes;
};

struct Mapping {
    std::size_t bytes;
    CUmemGenericAllocationHandle handle;
};

struct State {
    std::mutex mutex;
    // Handles look like opaque 64-bit values in real drivers; a counter keeps them unique.
    CUmemGenericAllocationHandle next_handle = 0xfa4e0000'00000001ULL;
    std::map<CUmemGenericAllocationHandle, Physical> physical;
    std::map<CUdeviceptr, Reservation> reservations;
    std::map<CUdeviceptr, Mapping> mappings; // keyed by start address
};

State& state() {
    static State s;
    return s;
}

bool aligned(std::size_t value) {
    return value % kVmmGranularity == 0;
}

bool on_host(CUmemLocationType type) {
    return type == CU_MEM_LOCATION_TYPE_HOST || type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
           type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
}

// Caller holds the lock.
void destroy_if_unused(State& s, std::map<CUmemGenericAllocationHandle, Physical>::iterator it) {
    const Physical& p = it->second;
    if (p.references > 0 || p.mappings > 0) return;
    if (p.on_device)
        credit_device(p.device, p.bytes);
    else
        credit_host_pinned(p.bytes);
    ::close(p.fd);
    s.physical.erase(it);
}

// Caller holds the lock. The reservation that wholly contains the range, or end().
std::map<CUdeviceptr, Reservation>::iterator reservation_of(State& s, CUdeviceptr address,
                                                            std::size_t bytes) {
    auto it = s.reservations.upper_bound(address);
    if (it == s.reservations.begin()) return s.reservations.end();
    --it;
    if (address + bytes > it->first + it->second.bytes) return s.reservations.end();
    return it;
}

// Caller holds the lock. The mapping that contains address, or end().
std::map<CUdeviceptr, Mapping>::iterator mapping_at(State& s, CUdeviceptr address) {
    auto it = s.mappings.upper_bound(address);
    if (it == s.mappings.begin()) return s.mappings.end();
    --it;
    if (address >= it->first + it->second.bytes) return s.mappings.end();
    return it;
}

} // namespace

CUresult vmm_check_prop(const CUmemAllocationProp* prop) noexcept {
    if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
        return valid_device(prop->location.id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    if (prop->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && prop->location.id < 0)
        return CUDA_ERROR_INVALID_VALUE;
    return on_host(prop->location.type) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult vmm_create(CUmemGenericAllocationHandle* handle, std::size_t bytes,
                    const CUmemAllocationProp* prop) noexcept {
    if (handle == nullptr || bytes == 0 || !aligned(bytes)) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult rc = vmm_check_prop(prop); rc != CUDA_SUCCESS) return rc;
    const bool on_device = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
    const int device = on_device ? prop->location.id : -1;
    const int fd = ::memfd_create("fakecuda-vmm", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        ::close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (on_device) {
        if (!charge_device(device, bytes)) {
            ::close(fd);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    } else {
        charge_host_pinned(bytes);
    }
    State& s = state();
    const std::lock_guard lock(s.mutex);
    const CUmemGenericAllocationHandle h = s.next_handle++;
    s.physical.emplace(h, Physical{bytes, on_device, device, 1, 0, fd});
    *handle = h;
    return CUDA_SUCCESS;
}

CUresult vmm_release(CUmemGenericAllocationHandle handle) noexcept {
    State& s = state();
    const std::lock_guard lock(s.mutex);
    const auto it = s.physical.find(handle);
    // A handle whose references are gone but is still mapped is dead to the caller.
    if (it == s.physical.end() || it->second.references == 0) return CUDA_ERROR_INVALID_VALUE;
    --it->second.references;
    destroy_if_unused(s, it);
    return CUDA_SUCCESS;
}

CUresult vmm_retain(CUmemGenericAllocationHandle* handle, CUdeviceptr address) noexcept {
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    const std::lock_guard lock(s.mutex);
    const auto m = mapping_at(s, address);
    if (m == s.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
    ++s.physical.at(m->second.handle).references;
    *handle = m->second.handle;
    return CUDA_SUCCESS;
}

CUresult vmm_reserve(CUdeviceptr* address, std::size_t bytes, std::size_t alignment) noexcept {
    if (address == nullptr || bytes == 0 || !aligned(bytes)) return CUDA_ERROR_INVALID_VALUE;
    if (alignment == 0) alignment = kVmmGranularity;
    if ((alignment & (alignment - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
    // Over-reserve so an aligned start exists inside; PROT_NONE costs address space only.
    const std::size_t region_bytes = bytes + alignment;
    void* region = ::mmap(nullptr, region_bytes, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    const auto base = reinterpret_cast<CUdeviceptr>(region);
    const CUdeviceptr start = (base + alignment - 1) & ~static_cast<CUdeviceptr>(alignment - 1);
    State& s = state();
    const std::lock_guard lock(s.mutex);
    s.reservations.emplace(start, Reservation{bytes, region, region_bytes});
    *address = start;
    return CUDA_SUCCESS;
}

CUresult vmm_address_free(CUdeviceptr address, std::size_t bytes) noexcept {
    State& s = state();
    const std::lock_guard lock(s.mutex);
    const auto it = s.reservations.find(address);
    if (it == s.reservations.end() || it->second.bytes != bytes) return CUDA_ERROR_INVALID_VALUE;
    ::munmap(it->second.region, it->second.region_bytes);
    s.reservations.erase(it);
    return CUDA_SUCCESS;
}

CUresult vmm_map(CUdeviceptr address, std::size_t bytes, std::size_t offset,
                 CUmemGenericAllocationHandle handle) noexcept {
    if (bytes == 0 || !aligned(bytes) || !aligned(offset) || !aligned(address))
        return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    const std::lock_guard lock(s.mutex);
    const auto p = s.physical.find(handle);
    if (p == s.physical.end() || p->second.references == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (offset + bytes > p->second.bytes) return CUDA_ERROR_INVALID_VALUE;
    if (reservation_of(s, address, bytes) == s.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    // Any existing mapping that starts inside the range, or contains its start, overlaps it.
    const auto next = s.mappings.lower_bound(address);
    if (next != s.mappings.end() && next->first < address + bytes) return CUDA_ERROR_INVALID_VALUE;
    if (mapping_at(s, address) != s.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
    void* at = reinterpret_cast<void*>(address);
    if (::mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->second.fd,
               static_cast<off_t>(offset)) == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s.mappings.emplace(address, Mapping{bytes, handle});
    ++p->second.mappings;
    return CUDA_SUCCESS;
}

CUresult vmm_unmap(CUdeviceptr address, std::size_t bytes) noexcept {
    State& s = state();
    const std::lock_guard lock(s.mutex);
    // The range must be exactly a run of whole, adjacent mappings starting at address.
    auto first = s.mappings.find(address);
    if (first == s.mappings.end() || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    auto last = first;
    CUdeviceptr covered = address;
    while (last != s.mappings.end() && last->first == covered && covered < address + bytes) {
        covered += last->second.bytes;
        ++last;
    }
    if (covered != address + bytes) return CUDA_ERROR_INVALID_VALUE;
    // Back to reserved, inaccessible address space.
    ::mmap(reinterpret_cast<void*>(address), bytes, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    for (auto it = first; it != last;) {
        const auto p = s.physical.find(it->second.handle);
        --p->second.mappings;
        destroy_if_unused(s, p);
        it = s.mappings.erase(it);
    }
    return CUDA_SUCCESS;
}

bool vmm_mapping_of(CUdeviceptr address, CUdeviceptr* start, std::size_t* bytes,
                    int* device) noexcept {
    State& s = state();
    const std::lock_guard lock(s.mutex);
    const auto m = mapping_at(s, address);
    if (m == s.mappings.end()) return false;
    const Physical& p = s.physical.at(m->second.handle);
    *start = m->first;
    *bytes = m->second.bytes;
    *device = p.on_device ? p.device : -1;
    return true;
}

CUresult vmm_check_mapped(CUdeviceptr address, std::size_t bytes) noexcept {
    State& s = state();
    const std::lock_guard lock(s.mutex);
    CUdeviceptr cursor = address;
    while (cursor < address + bytes) {
        const auto m = mapping_at(s, cursor);
        if (m == s.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
        cursor = m->first + m->second.bytes;
    }
    return bytes == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

} // namespace fakecuda
