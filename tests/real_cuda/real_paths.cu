// real_paths: every allocation path of NVIDIA's real CUDA runtime, built by the real nvcc twice
// (--cudart shared and --cudart static) and run on the fake driver (tests/fake_cuda). One uniquely
// named noinline function per path; the e2e test (tests/e2e/real_runtime_test.cpp) checks the
// report site by site and checks that the trace's counts equal the driver's.
//
// Ground truth (device 0; sizes as the fake driver makes them: pitch = width rounded up to 512,
// arrays = width x height x depth x element size x channels, summed over mipmap levels):
//   real_device_leak        cudaMalloc                       1000001   device   leaked
//   real_kernel_transient   cudaMalloc + kernel + cudaFree   1000002   device   freed
//   real_async_leak         cudaMallocAsync (stream)         1000003   device   leaked
//   real_pool_transient     cudaMallocFromPoolAsync + free   1000004   device   freed
//   real_managed_leak       cudaMallocManaged                1000005   managed  leaked
//   real_host_leak          cudaMallocHost                   1000006   pinned   leaked
//   real_pitch_leak         cudaMallocPitch 1000 x 7         7168      device   leaked
//   real_3d_leak            cudaMalloc3D 1000 x 3 x 2        6144      device   leaked
//   real_array_leak         cudaMallocArray float 256 x 16   16384     array    leaked
//   real_array3d_transient  cudaMalloc3DArray float 64x8x4   8192      array    freed
//   real_mipmap_transient   cudaMallocMipmappedArray 64x64x3 21504     array    freed
//   real_register_transient cudaHostRegister + Unregister    65536     host_registered freed
//   real_capture_leak       cudaMallocAsync under capture    1000007   graph    leaked
//   real_graph_transient    cudaGraphAddMemAllocNode + Free  1000008   graph    freed
//   real_ipc_transient      cudaIpcOpenMemHandle + Close     1000001   imported freed
//   real_import_kept        cudaMemPoolImportPointer         1000003   imported live (not a leak)
//   real_external_transient cudaExternalMemoryGetMappedBuffer + cudaFree 65536 imported freed
// Output: one line per step (name and cudaError_t), then the driver's own call counts.
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "fake_driver_probe.h"

__global__ void scale(float* data, float by) {
    data[threadIdx.x] *= by;
}

using namespace fake_driver_probe;

extern "C" {

__attribute__((noinline)) void* real_device_leak() {
    void* p = nullptr;
    step("cudaMalloc", cudaMalloc(&p, 1000001));
    return p;
}

__attribute__((noinline)) void real_kernel_transient() {
    float* p = nullptr;
    step("cudaMalloc", cudaMalloc(&p, 1000002));
    scale<<<1, 32>>>(p, 2.0f);
    step("launch", cudaGetLastError());
    step("cudaDeviceSynchronize", cudaDeviceSynchronize());
    step("cudaFree", cudaFree(p));
}

__attribute__((noinline)) void* real_async_leak(cudaStream_t s) {
    void* p = nullptr;
    step("cudaMallocAsync", cudaMallocAsync(&p, 1000003, s));
    return p;
}

__attribute__((noinline)) void real_pool_transient(cudaStream_t s) {
    cudaMemPool_t pool = nullptr;
    step("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
    void* p = nullptr;
    step("cudaMallocFromPoolAsync", cudaMallocFromPoolAsync(&p, 1000004, pool, s));
    step("cudaFreeAsync", cudaFreeAsync(p, s));
}

__attribute__((noinline)) void real_managed_leak() {
    void* p = nullptr;
    step("cudaMallocManaged", cudaMallocManaged(&p, 1000005));
}

__attribute__((noinline)) void real_host_leak() {
    void* p = nullptr;
    step("cudaMallocHost", cudaMallocHost(&p, 1000006));
}

__attribute__((noinline)) void real_pitch_leak() {
    void* p = nullptr;
    size_t pitch = 0;
    step("cudaMallocPitch", cudaMallocPitch(&p, &pitch, 1000, 7));
    std::printf("pitch %zu\n", pitch);
}

__attribute__((noinline)) void real_3d_leak() {
    cudaPitchedPtr p{};
    step("cudaMalloc3D", cudaMalloc3D(&p, make_cudaExtent(1000, 3, 2)));
    std::printf("pitch %zu\n", p.pitch);
}

__attribute__((noinline)) void real_array_leak() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaArray_t a = nullptr;
    step("cudaMallocArray", cudaMallocArray(&a, &f, 256, 16));
}

__attribute__((noinline)) void real_array3d_transient() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaArray_t a = nullptr;
    step("cudaMalloc3DArray", cudaMalloc3DArray(&a, &f, make_cudaExtent(64, 8, 4)));
    step("cudaFreeArray", cudaFreeArray(a));
}

__attribute__((noinline)) void real_mipmap_transient() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t a = nullptr;
    step("cudaMallocMipmappedArray",
         cudaMallocMipmappedArray(&a, &f, make_cudaExtent(64, 64, 0), 3));
    step("cudaFreeMipmappedArray", cudaFreeMipmappedArray(a));
}

__attribute__((noinline)) void real_register_transient() {
    void* buffer = std::aligned_alloc(4096, 65536);
    step("cudaHostRegister", cudaHostRegister(buffer, 65536, cudaHostRegisterDefault));
    step("cudaHostUnregister", cudaHostUnregister(buffer));
    std::free(buffer);
}

__attribute__((noinline)) void real_capture_leak(cudaStream_t s) {
    void* p = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    step("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    step("cudaMallocAsync(capturing)", cudaMallocAsync(&p, 1000007, s));
    step("cudaStreamEndCapture", cudaStreamEndCapture(s, &graph));
    step("cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
    step("cudaGraphLaunch", cudaGraphLaunch(exec, s));
    step("cudaStreamSynchronize", cudaStreamSynchronize(s));
}

__attribute__((noinline)) void real_graph_transient() {
    cudaGraph_t graph = nullptr;
    step("cudaGraphCreate", cudaGraphCreate(&graph, 0));
    cudaMemAllocNodeParams params{};
    params.poolProps.allocType = cudaMemAllocationTypePinned;
    params.poolProps.location.type = cudaMemLocationTypeDevice;
    params.poolProps.location.id = 0;
    params.bytesize = 1000008;
    cudaGraphNode_t alloc = nullptr, release = nullptr;
    step("cudaGraphAddMemAllocNode", cudaGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &params));
    step("cudaGraphAddMemFreeNode",
         cudaGraphAddMemFreeNode(&release, graph, &alloc, 1, params.dptr));
    step("cudaGraphDestroy", cudaGraphDestroy(graph));
}

__attribute__((noinline)) void real_ipc_transient(void* exported) {
    cudaIpcMemHandle_t handle{};
    step("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&handle, exported));
    void* mapped = nullptr;
    step("cudaIpcOpenMemHandle",
         cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess));
    step("cudaIpcCloseMemHandle", cudaIpcCloseMemHandle(mapped));
}

__attribute__((noinline)) void real_import_kept(void* exported) {
    cudaMemPoolPtrExportData data{};
    step("cudaMemPoolExportPointer", cudaMemPoolExportPointer(&data, exported));
    cudaMemPool_t pool = nullptr;
    step("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
    void* imported = nullptr;
    step("cudaMemPoolImportPointer", cudaMemPoolImportPointer(&imported, pool, &data));
}

__attribute__((noinline)) void real_external_transient() {
    int fd = memfd_create("real_paths", 0);
    if (fd >= 0 && ftruncate(fd, 1 << 20) != 0) fd = -1;
    cudaExternalMemoryHandleDesc desc{};
    desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = fd;
    desc.size = 1 << 20;
    cudaExternalMemory_t mem = nullptr;
    step("cudaImportExternalMemory", cudaImportExternalMemory(&mem, &desc));
    cudaExternalMemoryBufferDesc buffer{};
    buffer.offset = 0;
    buffer.size = 65536;
    void* p = nullptr;
    step("cudaExternalMemoryGetMappedBuffer", cudaExternalMemoryGetMappedBuffer(&p, mem, &buffer));
    step("cudaFree(external)", cudaFree(p));
    step("cudaDestroyExternalMemory", cudaDestroyExternalMemory(mem));
    if (fd >= 0) close(fd);
}

} // extern "C"

// The driver's own counters (tests/fake_cuda/include/fakecuda.h), read through the loaded libcuda.
static void print_driver_counts() {
    const FakeDriver driver = find_fake_driver();
    if (driver.calls == nullptr) {
        std::printf("driver-calls unavailable\n");
        ++g_failures;
        return;
    }
    print_driver_calls(driver, {"cuMemAlloc_v2",
                                "cuMemAllocAsync",
                                "cuMemAllocAsync_ptsz",
                                "cuMemAllocFromPoolAsync",
                                "cuMemAllocFromPoolAsync_ptsz",
                                "cuMemAllocManaged",
                                "cuMemHostAlloc",
                                "cuMemAllocHost_v2",
                                "cuMemAllocPitch_v2",
                                "cuArrayCreate_v2",
                                "cuArray3DCreate_v2",
                                "cuMipmappedArrayCreate",
                                "cuMemHostRegister_v2",
                                "cuGraphAddMemAllocNode",
                                "cuIpcOpenMemHandle_v2",
                                "cuMemPoolImportPointer",
                                "cuExternalMemoryGetMappedBuffer",
                                "cuMemFree_v2",
                                "cuMemFreeAsync",
                                "cuMemFreeAsync_ptsz",
                                "cuMemFreeHost",
                                "cuArrayDestroy",
                                "cuMipmappedArrayDestroy",
                                "cuMemHostUnregister",
                                "cuGraphAddMemFreeNode",
                                "cuIpcCloseMemHandle",
                                "cuMemCreate",
                                "cuMemRelease"});
}

int main() {
    cudaStream_t s = nullptr;
    step("cudaStreamCreate", cudaStreamCreate(&s));
    void* kept = real_device_leak();
    real_kernel_transient();
    void* async = real_async_leak(s);
    real_pool_transient(s);
    real_managed_leak();
    real_host_leak();
    real_pitch_leak();
    real_3d_leak();
    real_array_leak();
    real_array3d_transient();
    real_mipmap_transient();
    real_register_transient();
    real_capture_leak(s);
    real_graph_transient();
    real_ipc_transient(kept);
    real_import_kept(async);
    real_external_transient();
    step("cudaStreamSynchronize", cudaStreamSynchronize(s));
    print_driver_counts();
    std::printf("failures %d\n", g_failures);
    return g_failures == 0 ? 0 : 1;
}
