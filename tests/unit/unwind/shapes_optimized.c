#include "shapes.h"

#include <alloca.h>
#include <string.h>

shape_fn shape_next = shape_optimized;

__attribute__((noinline)) int shape_optimized(int depth, shape_leaf leaf, void* arg) {
    if (depth <= 0) {
        leaf(arg);
        return 0;
    }
    int r = shape_next(depth - 1, leaf, arg);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return r + 1;
}

/* A 64-byte aligned local and alloca: GCC realigns the stack through a register (DRAP) and
 * describes the CFA as a copy saved below rbp (DW_CFA_def_cfa_expression). */
__attribute__((noipa)) static int realigned_body(int depth, shape_leaf leaf, void* arg) {
    char buffer[128] __attribute__((aligned(64)));
    memset(buffer, depth, sizeof buffer);
    char* scratch = alloca(16 + (size_t)depth * 8);
    memset(scratch, 0, 16);
    __asm__ volatile("" : : "r"(buffer), "r"(scratch) : "memory");
    int r = shape_next(depth - 1, leaf, arg);
    __asm__ volatile("" ::: "memory");
    return r + buffer[depth & 127] + scratch[1];
}

__attribute__((noinline)) int shape_realigned(int depth, shape_leaf leaf, void* arg) {
    if (depth <= 0) {
        leaf(arg);
        return 0;
    }
    int r = realigned_body(depth, leaf, arg);
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) int shape_mixed(int depth, shape_leaf leaf, void* arg) {
    static const shape_fn shapes[3] = {shape_optimized, shape_frame_pointer, shape_realigned};
    int r = shapes[depth % 3](depth, leaf, arg);
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) int shape_outer_a(int pad, int depth, shape_leaf leaf, void* arg) {
    volatile char local[512];
    local[pad & 511] = 1;
    int r = shape_next(depth, leaf, arg);
    __asm__ volatile("" ::: "memory");
    return r + local[0];
}

__attribute__((noinline)) int shape_outer_b(int pad, int depth, shape_leaf leaf, void* arg) {
    volatile char local[512];
    local[pad & 511] = 2;
    int r = shape_next(depth, leaf, arg);
    __asm__ volatile("" ::: "memory");
    return r + local[0];
}
