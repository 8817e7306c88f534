#include "driver_table.hpp"

#include "errors.hpp"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

namespace fakecudart {
namespace {

DriverTable g_table{};
// pthread_once rather than std::call_once: the runtime must not need libstdc++, because C programs
// link the static archive with the C driver, just as they link NVIDIA's libcudart_static.a.
pthread_once_t g_once = PTHREAD_ONCE_INIT;

// Shares FAKECUDA_LOG with the driver so one switch shows the whole handshake in order.
void log_line(const char* text) {
    const char* enabled = std::getenv("FAKECUDA_LOG");
    if (enabled == nullptr || std::strcmp(enabled, "1") != 0) return;
    [[maybe_unused]] const ssize_t written = ::write(2, text, std::strlen(text));
}

template <typename Pfn>
void query(PFN_cuGetProcAddress_v12000 resolver, Pfn* out, const char* name, int version,
           cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    // A failed query leaves the entry null; the entry point that needs it reports the error.
    if (resolver(name, &fn, version, flags, &status) == CUDA_SUCCESS &&
        status == CU_GET_PROC_ADDRESS_SUCCESS)
        *out = reinterpret_cast<Pfn>(fn);
}

cudaError_t handshake(DriverTable& t) {
    void* libcuda = ::dlopen("libcuda.so.1", RTLD_NOW);
    if (libcuda == nullptr) {
        log_line("fakecudart: dlopen(\"libcuda.so.1\") failed\n");
        return cudaErrorInsufficientDriver;
    }
    log_line("fakecudart: dlsym(libcuda.so.1, \"cuGetProcAddress_v2\")\n");
    const auto bootstrap =
        reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(libcuda, "cuGetProcAddress_v2"));
    if (bootstrap == nullptr) return cudaErrorInsufficientDriver;

    // cudart probes with an empty name first; the answer is ignored.
    void* ignored = nullptr;
    CUdriverProcAddressQueryResult ignored_status{};
    bootstrap("", &ignored, 0, CU_GET_PROC_ADDRESS_DEFAULT, &ignored_status);

    query(bootstrap, &t.cuInit, "cuInit", 2000);
    query(bootstrap, &t.resolve_v1, "cuGetProcAddress", 11030);
    query(bootstrap, &t.resolve, "cuGetProcAddress", 12000);
    if (t.cuInit == nullptr || t.resolve == nullptr) return cudaErrorInsufficientDriver;

    // The subset of cudart 13's 436 queries that this runtime uses, in cudart's order and with
    // cudart's versions and flags.
    const PFN_cuGetProcAddress_v12000 r = t.resolve;
    query(r, &t.cuDeviceGet, "cuDeviceGet", 2000);
    query(r, &t.cuDeviceGetCount, "cuDeviceGetCount", 2000);
    query(r, &t.cuDriverGetVersion, "cuDriverGetVersion", 2020);
    query(r, &t.cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 11020);
    query(r, &t.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
    query(r, &t.cuCtxSetCurrent, "cuCtxSetCurrent", 4000);
    query(r, &t.cuCtxGetCurrent, "cuCtxGetCurrent", 4000);
    query(r, &t.cuCtxGetDevice, "cuCtxGetDevice", 2000);
    query(r, &t.cuCtxGetDevice_v2, "cuCtxGetDevice", 13000);
    query(r, &t.cuMemGetInfo, "cuMemGetInfo", 3020);
    query(r, &t.cuMemAllocManaged, "cuMemAllocManaged", 6000);
    query(r, &t.cuMemAlloc, "cuMemAlloc", 3020);
    query(r, &t.cuMemAllocPitch, "cuMemAllocPitch", 3020);
    query(r, &t.cuMemFree, "cuMemFree", 3020);
    query(r, &t.cuMemFreeHost, "cuMemFreeHost", 2000);
    query(r, &t.cuMemHostAlloc, "cuMemHostAlloc", 2020);
    query(r, &t.cuMemAllocAsync, "cuMemAllocAsync", 11020);
    query(r, &t.cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020,
          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    query(r, &t.cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020);
    query(r, &t.cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020,
          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    query(r, &t.cuMemFreeAsync, "cuMemFreeAsync", 11020);
    query(r, &t.cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020,
          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);

    // cudart checks the driver version, then initialises, only after all queries are answered.
    if (t.cuDriverGetVersion != nullptr) {
        int version = 0;
        t.cuDriverGetVersion(&version);
        if (version < CUDART_VERSION) return cudaErrorInsufficientDriver;
    }
    return to_runtime_error(t.cuInit(0));
}

} // namespace

const DriverTable& driver() {
    pthread_once(&g_once, [] { g_table.status = handshake(g_table); });
    return g_table;
}

} // namespace fakecudart
