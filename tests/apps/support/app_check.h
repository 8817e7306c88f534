/* Self-checks shared by the test programs.
 *
 * A program checks its own ground truth against the fake driver's bookkeeping (fakecuda.h), so the
 * same binary is a valid test with no tracer and under LD_PRELOAD: a tracer that drops, duplicates
 * or alters a call makes the program fail with a message on stderr. */
#ifndef APP_CHECK_H
#define APP_CHECK_H

/* Prints "<program>: <message>" to stderr and exits with status 1. */
void app_fail(const char* format, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* For any call returning CUresult or cudaError_t: both spell success as 0. */
#define APP_OK(call)                                                                               \
    do {                                                                                           \
        const int app_rc_ = (int)(call);                                                           \
        if (app_rc_ != 0) app_fail("%s:%d: %s returned %d", __FILE__, __LINE__, #call, app_rc_);   \
    } while (0)

#define APP_EXPECT_RC(call, expected)                                                              \
    do {                                                                                           \
        const int app_rc_ = (int)(call);                                                           \
        if (app_rc_ != (int)(expected))                                                            \
            app_fail("%s:%d: %s returned %d, expected %d", __FILE__, __LINE__, #call, app_rc_,     \
                     (int)(expected));                                                             \
    } while (0)

#define APP_CHECK(condition, ...)                                                                  \
    do {                                                                                           \
        if (!(condition)) app_fail(__VA_ARGS__);                                                   \
    } while (0)

/* The fake driver's counters, read through dlopen(RTLD_NOLOAD) so that programs which do not link
 * libcuda can use them too. libcuda.so.1 must already be loaded. */
void app_expect_calls(const char* function, long expected);
void app_expect_device_used(int device, unsigned long long bytes);
void app_expect_device_peak(int device, unsigned long long bytes);
void app_expect_pinned_used(unsigned long long bytes);
void app_expect_managed_used(unsigned long long bytes);

/* Where a resolved function pointer lives.
 * - If the environment sets APPS_EXPECT_MODULE (e.g. "libcuda.so.1" with no tracer, "libgpuleak"
 *   under the preload), the pointer must lie in a module whose path contains that text.
 * - Whenever the pointer lies in the fake libcuda, dladdr must name exactly `symbol`, which proves
 *   the resolver picked the right ABI variant. NULL skips the name check. */
void app_expect_resolved(const void* fn, const char* symbol);

/* Like app_expect_resolved, but the module is fixed: for answers a tracer must pass through
 * untouched, such as the legacy 32-bit cuMemAlloc. Checked only when APPS_EXPECT_MODULE is set. */
void app_expect_resolved_in(const void* fn, const char* symbol, const char* module);

/* For entry points a tracer may or may not wrap (cuInit): only the name check inside libcuda. */
void app_expect_resolved_any(const void* fn, const char* symbol);

/* 1 if FAKECUDA_HIDDEN_POINTERS=1: the fake driver answers cuGetProcAddress with hidden thunks. */
int app_hidden_pointers(void);

/* How many resolved pointers the checks above found to be the fake driver's hidden thunks
 * (FAKECUDA_HIDDEN_POINTERS=1), so that a program can prove the switch reached it. */
int app_hidden_thunks_seen(void);

/* 1 if a module whose path contains `name` is loaded in this process. */
int app_module_loaded(const char* name);

#endif
