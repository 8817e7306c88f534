#pragma once

// The library the symbolizer test dlopens. It reports, at run time, return addresses inside its
// functions together with the source lines they must resolve to; the functions behind the C entry
// points are C++ in a namespace so the test can check demangled, qualified names.

namespace gpuleak_test {

struct Capture {
    void* return_address = nullptr; // of a call made at `line`
    int line = 0;
};

} // namespace gpuleak_test

// Exported explicitly so a project-wide -fvisibility=hidden cannot hide them from dlsym.
#define GPULEAK_HELPER_API __attribute__((visibility("default")))

extern "C" {

// A noinline function calls out from a known line.
GPULEAK_HELPER_API int gpuleak_helper_direct(gpuleak_test::Capture* capture);
// A noinline function calls, from `*call_line`, an always_inline function that calls out from
// `inner->line`.
GPULEAK_HELPER_API int gpuleak_helper_inlined(gpuleak_test::Capture* inner, int* call_line);
// A noinline function calls an always_inline one that calls out twice, from two lines.
GPULEAK_HELPER_API int gpuleak_helper_inlined_twice(gpuleak_test::Capture* first,
                                                    gpuleak_test::Capture* second);
// A loop of two iterations, unrolled, calls out from one line: captures[0] and [1].
GPULEAK_HELPER_API void gpuleak_helper_one_call_twice(gpuleak_test::Capture* captures);
// The entry address of a function that ends in a tail call to the function recording return
// addresses.
GPULEAK_HELPER_API void* gpuleak_helper_tail_caller_entry();
// Calls a function of internal linkage directly, then through a pointer: each records its return
// address.
GPULEAK_HELPER_API void gpuleak_helper_direct_and_indirect(gpuleak_test::Capture* direct,
                                                           gpuleak_test::Capture* indirect);
// A noinline function calls out from a lambda inlined into it.
GPULEAK_HELPER_API int gpuleak_helper_lambda(gpuleak_test::Capture* capture);
// The entry address of a function of internal linkage that ends in a tail call to another.
GPULEAK_HELPER_API void* gpuleak_helper_internal_tail_caller_entry();
// The entry address of the function behind gpuleak_helper_direct.
GPULEAK_HELPER_API void* gpuleak_helper_direct_entry();

using GpuleakHelperDirectFn = int (*)(gpuleak_test::Capture*);
using GpuleakHelperInlinedFn = int (*)(gpuleak_test::Capture*, int*);
using GpuleakHelperInlinedTwiceFn = int (*)(gpuleak_test::Capture*, gpuleak_test::Capture*);
using GpuleakHelperEntryFn = void* (*)();
using GpuleakHelperCapturesFn = void (*)(gpuleak_test::Capture*);
using GpuleakHelperTwoCapturesFn = void (*)(gpuleak_test::Capture*, gpuleak_test::Capture*);
}
