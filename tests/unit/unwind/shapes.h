/* Call chains of different frame shapes, each ending in a callback that takes backtraces: the
 * stacks the walk is compared with libunwind on (frame_walk_test.cpp). Every level calls
 * shape_next(depth - 1, ...), and level 0 calls the leaf. */
#ifndef UNWIND_SHAPES_H
#define UNWIND_SHAPES_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*shape_leaf)(void* arg);
typedef int (*shape_fn)(int depth, shape_leaf leaf, void* arg);

/* What every level calls next: one shape throughout, or shape_mixed. */
extern shape_fn shape_next;

/* shapes_optimized.c (-O2, no frame pointer): the CFA from rsp. */
int shape_optimized(int depth, shape_leaf leaf, void* arg);
/* shapes_optimized.c: a 64-byte aligned local and alloca make GCC realign the stack through a
 * saved copy of the CFA (DW_CFA_def_cfa_expression). */
int shape_realigned(int depth, shape_leaf leaf, void* arg);
/* shapes_frame_pointer.c (-O0, frame pointers, alloca): the CFA from rbp. */
int shape_frame_pointer(int depth, shape_leaf leaf, void* arg);
/* One of the three by depth % 3. */
int shape_mixed(int depth, shape_leaf leaf, void* arg);
/* Callers of shape_next(depth, ...), taking `pad`, for tests of frames that lie at the same stack
 * address under different callers. shape_outer_a and _b (shapes_optimized.c) are alike but for
 * their addresses, ignore `pad` and keep a 512-byte local; shape_outer_padded
 * (shapes_frame_pointer.c) moves its stack pointer down by `pad` bytes (alloca) and finds its CFA
 * from rbp. */
typedef int (*shape_outer)(int pad, int depth, shape_leaf leaf, void* arg);
int shape_outer_a(int pad, int depth, shape_leaf leaf, void* arg);
int shape_outer_b(int pad, int depth, shape_leaf leaf, void* arg);
int shape_outer_padded(int pad, int depth, shape_leaf leaf, void* arg);

#ifdef __cplusplus
}
#endif

#endif
