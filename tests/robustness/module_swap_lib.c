/* libmodule_swap_{a,b}.so: one source built twice with different SWAP_FRAME_BYTES. The code is the
 * same instruction for instruction (both sizes take a 32-bit immediate), so swap_alloc's call to
 * cuMemAlloc_v2 returns to the same offset in either library, where the caller's stack frame is a
 * different size: a walk that reads library b's frame with library a's rule finds a wrong return
 * address. Built without frame pointers, so only the unwind tables say where the caller is. */
#include <cuda.h>

#ifndef SWAP_FRAME_BYTES
#error "SWAP_FRAME_BYTES must be defined"
#endif

__attribute__((noinline)) CUresult swap_alloc(CUdeviceptr* out, size_t bytes) {
    volatile char frame[SWAP_FRAME_BYTES];
    frame[0] = (char)bytes;
    CUresult rc = cuMemAlloc_v2(out, bytes);
    frame[SWAP_FRAME_BYTES - 1] = (char)rc;
    return rc + frame[0] - (char)bytes;
}
