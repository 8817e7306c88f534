/* The per-thread-default-stream half of path_entry_point (see path_entry_point.c). */
#ifndef PATH_ENTRY_POINT_PTSZ_H
#define PATH_ENTRY_POINT_PTSZ_H

#include <cuda.h>

CUdeviceptr entry_ptsz_default_leak(void);

#endif
