/* The per-thread-default-stream half of path_direct (see path_direct.c for the ground truth). */
#ifndef PATH_DIRECT_PTSZ_H
#define PATH_DIRECT_PTSZ_H

#include <cuda.h>

void direct_async_ptsz_transient(void);
CUdeviceptr direct_async_ptsz_leak(void);
void direct_pool_ptsz_transient(CUmemoryPool pool);

#endif
