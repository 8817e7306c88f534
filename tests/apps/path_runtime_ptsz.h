/* The per-thread-default-stream half of path_runtime (see path_runtime.c for the ground truth). */
#ifndef PATH_RUNTIME_PTSZ_H
#define PATH_RUNTIME_PTSZ_H

void* runtime_async_ptsz_leak(void);

#endif
