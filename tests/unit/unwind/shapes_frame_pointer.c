#include "shapes.h"

#include <alloca.h>
#include <string.h>

/* -O0 with frame pointers: an rbp-based CFA; alloca moves rsp by a size known only at run time. */
int shape_frame_pointer(int depth, shape_leaf leaf, void* arg) {
    char* scratch = alloca(16 + (size_t)depth * 8);
    memset(scratch, 0, 16);
    if (depth <= 0) {
        leaf(arg);
        return scratch[0];
    }
    return shape_next(depth - 1, leaf, arg) + scratch[1];
}

int shape_outer_padded(int pad, int depth, shape_leaf leaf, void* arg) {
    char* scratch = alloca((size_t)pad);
    __asm__ volatile("" : : "r"(scratch) : "memory");
    return shape_next(depth, leaf, arg);
}
