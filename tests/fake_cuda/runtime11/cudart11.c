/* A stand-in for NVIDIA's libcudart.so.11.0 (CUDA 11.8), reduced to what a CUDA 11.3-11.8 caller of
 * the driver entry-point API reaches: there cudaGetDriverEntryPoint[_ptsz] take three arguments
 * (symbol, funcPtr, flags), without the CUDA 12 `driverStatus`. One exported symbol name serves
 * every libcudart in a process, so a tracer's export must not assume the 12.x form.
 *
 * Handshake as 11.8 does it (shared/reference/real-cuda-runtime.md): dlopen("libcuda.so.1"), the
 * exported 4-argument cuGetProcAddress("cuGetProcAddress", 11030, 0), then every query through the
 * pointer that self-query returned, at the runtime's own version 11080. */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#undef cuGetProcAddress

#define FAKECUDART11_VERSION 11080

/* cudaError_t values of CUDA 11.8 */
enum {
    kSuccess = 0,
    kInvalidValue = 1,
    kInitializationError = 3,
    kInsufficientDriver = 35,
    kSymbolNotFound = 500,
};

typedef CUresult (*Resolver)(const char* symbol, void** pfn, int version, cuuint64_t flags);

static Resolver g_resolve;
static int g_status;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void start(void) {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW);
    Resolver exported = driver ? (Resolver)dlsym(driver, "cuGetProcAddress") : NULL;
    void* self = NULL;
    if (!exported || exported("cuGetProcAddress", &self, 11030, 0) != CUDA_SUCCESS || !self) {
        g_status = kInsufficientDriver;
        return;
    }
    g_resolve = (Resolver)self;
    CUresult (*init)(unsigned int) = NULL;
    if (g_resolve("cuInit", (void**)&init, 2000, 0) != CUDA_SUCCESS || !init || init(0)) {
        g_status = kInitializationError;
        return;
    }
}

int cudaRuntimeGetVersion(int* runtimeVersion) {
    if (!runtimeVersion) return kInvalidValue;
    *runtimeVersion = FAKECUDART11_VERSION;
    return kSuccess;
}

static int entry_point(const char* symbol, void** funcPtr, unsigned long long flags) {
    if (!symbol || !funcPtr) return kInvalidValue;
    pthread_once(&g_once, start);
    if (g_status) return g_status;
    CUresult rc = g_resolve(symbol, funcPtr, FAKECUDART11_VERSION, flags);
    if (rc == CUDA_SUCCESS && *funcPtr) return kSuccess;
    *funcPtr = NULL;
    return rc == CUDA_ERROR_INVALID_VALUE ? kInvalidValue : kSymbolNotFound;
}

int cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags) {
    return entry_point(symbol, funcPtr, flags);
}

/* Code built with per-thread default stream: "default" (0) means per-thread (2). */
int cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr, unsigned long long flags) {
    return entry_point(symbol, funcPtr,
                       flags == 0 ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : flags);
}
