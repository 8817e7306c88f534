/* Test-only introspection exported by the fake libcuda.so.1.
 *
 * Test programs use these to check their own ground truth without trusting the tracer under test:
 * every number here comes from the fake driver's own bookkeeping. */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* Calls made to the exported function of exactly this name, or to the non-exported self-query
 * resolvers "resolver_self_v1" / "resolver_self_v2". -1 for a name the fake does not know, so a
 * typo in a test fails loudly instead of reading as "never called". */
long fakecuda_calls(const char* name);

/* Device bytes currently charged against FAKECUDA_CAPACITY on that device (linear allocations,
 * stream-ordered allocations and DEVICE-location cuMemCreate physical memory). */
unsigned long long fakecuda_device_used(int device);

/* Highest value fakecuda_device_used(device) has reached in this process. */
unsigned long long fakecuda_device_peak(int device);

/* Page-locked host bytes live now (cuMemAllocHost, cuMemHostAlloc, HOST-location cuMemCreate). */
unsigned long long fakecuda_host_pinned_used(void);

/* Managed (unified) bytes live now; not charged against the device capacity. */
unsigned long long fakecuda_managed_used(void);

/* Host bytes registered now with cuMemHostRegister (the program's memory, page-locked). */
unsigned long long fakecuda_host_registered_used(void);

/* The exported function a cuGetProcAddress answer stands for: under FAKECUDA_HIDDEN_POINTERS=1 the
 * answer is a thunk no exported name covers, and this gives the function it jumps to; any other
 * pointer comes back as it is. Lets a test check the ABI variant without dladdr naming the answer.
 */
void* fakecuda_unhide(void* fn);

#ifdef __cplusplus
}
#endif

#endif
