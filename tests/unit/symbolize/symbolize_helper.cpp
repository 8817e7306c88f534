#include "symbolize_helper.h"

// noipa keeps GCC from cloning or specialising these, which would rename them (".constprop.0").
#if defined(__clang__)
#define HELPER_NOINLINE __attribute__((noinline))
#else
#define HELPER_NOINLINE __attribute__((noipa))
#endif

namespace gpuleak_test {

HELPER_NOINLINE void record_return_address(Capture* capture) {
    capture->return_address = __builtin_return_address(0);
}

// Reading capture->line after the call keeps it from being a tail call, whose return address
// would point into our caller instead.
HELPER_NOINLINE int direct_caller(Capture* capture) {
    capture->line = __LINE__ + 1;
    record_return_address(capture);
    return capture->line;
}

__attribute__((always_inline)) inline void inlined_body(Capture* capture) {
    capture->line = __LINE__ + 1;
    record_return_address(capture);
}

HELPER_NOINLINE int inline_host(Capture* inner, int* call_line) {
    *call_line = __LINE__ + 1;
    inlined_body(inner);
    return *call_line + inner->line;
}

__attribute__((always_inline)) inline void inlined_twice(Capture* first, Capture* second) {
    first->line = __LINE__ + 1;
    record_return_address(first);
    second->line = __LINE__ + 1;
    record_return_address(second);
}

HELPER_NOINLINE int two_call_host(Capture* first, Capture* second) {
    inlined_twice(first, second);
    return first->line + second->line;
}

// One call, compiled twice: the loop is unrolled into two copies of it.
HELPER_NOINLINE void one_call_twice(Capture* captures) {
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) {
        captures[i].line = __LINE__ + 1;
        record_return_address(&captures[i]);
    }
}

// Sibling calls stay on here alone: this function's last call is a jump.
__attribute__((optimize("optimize-sibling-calls"), noipa)) void
ends_in_a_tail_call(Capture* capture) {
    capture->line = __LINE__ + 1;
    record_return_address(capture);
}

// A lambda inlined into its function: DWARF names its closure type nothing.
HELPER_NOINLINE int lambda_host(Capture* capture) {
    auto record = [capture]() __attribute__((always_inline)) {
        capture->line = __LINE__ + 1;
        record_return_address(capture);
    };
    record();
    return capture->line;
}

namespace {

// Internal linkage: DWARF names these without their parameters, their symbols with them.
HELPER_NOINLINE void record_here(Capture* capture) {
    capture->return_address = __builtin_return_address(0);
}

__attribute__((optimize("optimize-sibling-calls"), noipa)) void
ends_in_an_internal_tail_call(Capture* capture) {
    capture->line = __LINE__ + 1;
    record_here(capture);
}

} // namespace

void (*volatile g_record_through)(Capture*) = record_here;

HELPER_NOINLINE void calls_direct_and_indirect(Capture* direct, Capture* indirect) {
    record_here(direct);
    g_record_through(indirect);
    direct->line = indirect->line = 0;
}

} // namespace gpuleak_test

extern "C" {

int gpuleak_helper_direct(gpuleak_test::Capture* capture) {
    return gpuleak_test::direct_caller(capture);
}

int gpuleak_helper_inlined(gpuleak_test::Capture* inner, int* call_line) {
    return gpuleak_test::inline_host(inner, call_line);
}

int gpuleak_helper_inlined_twice(gpuleak_test::Capture* first, gpuleak_test::Capture* second) {
    return gpuleak_test::two_call_host(first, second);
}

void gpuleak_helper_one_call_twice(gpuleak_test::Capture* captures) {
    gpuleak_test::one_call_twice(captures);
}

void* gpuleak_helper_tail_caller_entry() {
    return reinterpret_cast<void*>(&gpuleak_test::ends_in_a_tail_call);
}

void gpuleak_helper_direct_and_indirect(gpuleak_test::Capture* direct,
                                        gpuleak_test::Capture* indirect) {
    gpuleak_test::calls_direct_and_indirect(direct, indirect);
}

int gpuleak_helper_lambda(gpuleak_test::Capture* capture) {
    return gpuleak_test::lambda_host(capture);
}

void* gpuleak_helper_internal_tail_caller_entry() {
    return reinterpret_cast<void*>(&gpuleak_test::ends_in_an_internal_tail_call);
}

void* gpuleak_helper_direct_entry() {
    return reinterpret_cast<void*>(&gpuleak_test::direct_caller);
}
}
