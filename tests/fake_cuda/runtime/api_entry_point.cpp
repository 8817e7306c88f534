// cudaGetDriverEntryPoint[ByVersion][_ptsz]: forwarded to the resolver cudart stored from the
// ("cuGetProcAddress", 12000) self-query, as the real runtime does (real_cudart13_handshake.txt),
// so a tracer that wrapped that resolver also covers these.
#include "invoke.hpp"

namespace {

cudaError_t entry_point(const char* symbol, void** funcPtr, int cudaVersion,
                        unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus) {
    if (symbol == nullptr || funcPtr == nullptr) return cudaErrorInvalidValue;
    const fakecudart::DriverTable& t = fakecudart::driver();
    if (t.status != cudaSuccess) return t.status;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const CUresult rc = t.resolve(symbol, funcPtr, cudaVersion, flags, &status);
    // Not found is an answer, not an error: cudaSuccess with a NULL pointer and the status set.
    if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_FOUND) return fakecudart::to_runtime_error(rc);
    if (rc == CUDA_ERROR_NOT_FOUND) *funcPtr = nullptr;
    // The runtime enum has the driver enum's values.
    if (driverStatus != nullptr)
        *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
    return cudaSuccess;
}

// The _ptsz forms exist for code built with per-thread default stream: there "default" means
// per-thread.
unsigned long long per_thread_default(unsigned long long flags) {
    return flags == cudaEnableDefault
               ? static_cast<unsigned long long>(cudaEnablePerThreadDefaultStream)
               : flags;
}

} // namespace

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* driverStatus) {
    // The unversioned form asks for the ABI of the runtime's own version.
    return fakecudart::finish(entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus));
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                         unsigned long long flags,
                                         cudaDriverEntryPointQueryResult* driverStatus) {
    return fakecudart::finish(
        entry_point(symbol, funcPtr, CUDART_VERSION, per_thread_default(flags), driverStatus));
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             cudaDriverEntryPointQueryResult* driverStatus) {
    return fakecudart::finish(
        entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus));
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr,
                                                  unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  cudaDriverEntryPointQueryResult* driverStatus) {
    return fakecudart::finish(entry_point(symbol, funcPtr, static_cast<int>(cudaVersion),
                                          per_thread_default(flags), driverStatus));
}
