// real_nccl: NCCL on the fake driver and the fake NVML (tests/fake_cuda/nvml): a communicator
// on one device (ncclCommInitAll), one all-reduce over a buffer of the program's, then
// ncclCommDestroy. The e2e test checks that NCCL's own memory (its VMM buffers and pinned host
// memory, which a framework's allocator never sees) is traced and attributed to the NCCL call
// that made it, and that the trace's counts equal the driver's.
//
// Ground truth, from the driver's own counters (fakecuda_calls, fakecuda_device_used,
// fakecuda_host_pinned_used), one line per phase:
//   phase NAME device=B pinned=B creates=N host_allocs=N allocs=N launches=N
// where B are the bytes that phase added (device memory, pinned host memory) and N the calls it
// made (cuMemCreate, cuMemHostAlloc, cuMemAlloc_v2, kernel launches). The fake driver runs no
// kernel, so the all-reduce computes nothing and this program does not look at the result.
// Then "left device=B pinned=B" after ncclCommDestroy and cudaFree, and the driver's totals.
// Exit status 0 unless the driver's counters cannot be read: an NCCL status is data for the
// test, compared between the runs with and without the tracer.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>

#include "fake_driver_probe.h"

using namespace fake_driver_probe;

namespace {

FakeDriver g_driver;

struct Counters {
    unsigned long long device, pinned;
    long creates, host_allocs, allocs, launches;
};

Counters now() {
    const FakeDriver& d = g_driver;
    const long launches = kernel_launches(d);
    return {d.device_used(0),         d.pinned_used(),
            d.calls("cuMemCreate"),   d.calls("cuMemHostAlloc") + d.calls("cuMemAllocHost_v2"),
            d.calls("cuMemAlloc_v2"), launches};
}

void phase(const char* name, const Counters& before) {
    const Counters after = now();
    std::printf("phase %s device=%lld pinned=%lld creates=%ld host_allocs=%ld allocs=%ld "
                "launches=%ld\n",
                name, static_cast<long long>(after.device - before.device),
                static_cast<long long>(after.pinned - before.pinned),
                after.creates - before.creates, after.host_allocs - before.host_allocs,
                after.allocs - before.allocs, after.launches - before.launches);
}

} // namespace

extern "C" {

__attribute__((noinline)) void real_nccl_init(ncclComm_t* comm) {
    const int devices[1] = {0};
    step("ncclCommInitAll", ncclCommInitAll(comm, 1, devices));
}

__attribute__((noinline)) void real_nccl_buffer(float** buf) {
    step("cudaMalloc", cudaMalloc(buf, 4096));
}

__attribute__((noinline)) void real_nccl_allreduce(ncclComm_t comm, float* buf) {
    step("ncclAllReduce", ncclAllReduce(buf, buf, 1024, ncclFloat, ncclSum, comm, nullptr));
    step("cudaStreamSynchronize", cudaStreamSynchronize(nullptr));
}

__attribute__((noinline)) void real_nccl_destroy(ncclComm_t comm) {
    step("ncclCommDestroy", ncclCommDestroy(comm));
}

} // extern "C"

int main() {
    // The runtime loads the driver on its first call; the counters are read from that copy.
    step("cudaFree(0)", cudaFree(nullptr));
    g_driver = find_fake_driver();
    if (g_driver.calls == nullptr || g_driver.device_used == nullptr ||
        g_driver.pinned_used == nullptr) {
        std::printf("driver-calls unavailable\n");
        return 1;
    }
    const Counters start = now();

    ncclComm_t comm = nullptr;
    Counters before = now();
    real_nccl_init(&comm);
    phase("init", before);

    float* buf = nullptr;
    before = now();
    real_nccl_buffer(&buf);
    phase("buffer", before);

    before = now();
    real_nccl_allreduce(comm, buf);
    phase("allreduce", before);

    before = now();
    real_nccl_destroy(comm);
    step("cudaFree", cudaFree(buf));
    phase("destroy", before);

    const Counters end = now();
    std::printf("left device=%lld pinned=%lld\n", static_cast<long long>(end.device - start.device),
                static_cast<long long>(end.pinned - start.pinned));
    print_driver_calls(g_driver, {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz",
                                  "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz",
                                  "cuMemAllocManaged", "cuMemHostAlloc", "cuMemAllocHost_v2",
                                  "cuMemAllocPitch_v2", "cuMemCreate", "cuMemFree_v2",
                                  "cuMemFreeAsync", "cuMemFreeAsync_ptsz", "cuMemFreeHost",
                                  "cuMemRelease", "cuMemMap", "cuMemUnmap"});
    std::printf("failures %d\n", g_failures);
    return 0;
}
