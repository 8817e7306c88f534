#include "app_check.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_fail(const char* format, ...) {
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "%s: ", program_invocation_short_name);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void* fake_symbol(const char* name) {
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (libcuda == NULL) app_fail("libcuda.so.1 is not loaded; cannot read %s", name);
    void* fn = dlsym(libcuda, name);
    if (fn == NULL) app_fail("the loaded libcuda.so.1 has no %s: is it the fake?", name);
    dlclose(libcuda); /* drops only the reference NOLOAD added */
    return fn;
}

void app_expect_calls(const char* function, long expected) {
    long (*calls)(const char*) = (long (*)(const char*))fake_symbol("fakecuda_calls");
    const long actual = calls(function);
    APP_CHECK(actual == expected, "fake driver saw %ld call(s) to %s, expected %ld", actual,
              function, expected);
}

typedef unsigned long long (*DeviceQuery)(int);
typedef unsigned long long (*HostQuery)(void);

void app_expect_device_used(int device, unsigned long long bytes) {
    const unsigned long long actual = ((DeviceQuery)fake_symbol("fakecuda_device_used"))(device);
    APP_CHECK(actual == bytes, "device %d has %llu bytes in use, expected %llu", device, actual,
              bytes);
}

void app_expect_device_peak(int device, unsigned long long bytes) {
    const unsigned long long actual = ((DeviceQuery)fake_symbol("fakecuda_device_peak"))(device);
    APP_CHECK(actual == bytes, "device %d peaked at %llu bytes, expected %llu", device, actual,
              bytes);
}

void app_expect_pinned_used(unsigned long long bytes) {
    const unsigned long long actual = ((HostQuery)fake_symbol("fakecuda_host_pinned_used"))();
    APP_CHECK(actual == bytes, "%llu pinned host bytes in use, expected %llu", actual, bytes);
}

void app_expect_managed_used(unsigned long long bytes) {
    const unsigned long long actual = ((HostQuery)fake_symbol("fakecuda_managed_used"))();
    APP_CHECK(actual == bytes, "%llu managed bytes in use, expected %llu", actual, bytes);
}

static int hidden_thunks_seen = 0;

int app_hidden_thunks_seen(void) {
    return hidden_thunks_seen;
}

int app_hidden_pointers(void) {
    const char* value = getenv("FAKECUDA_HIDDEN_POINTERS");
    return value != NULL && strcmp(value, "1") == 0;
}

static void check_owner(const void* fn, const char* symbol, const char* module) {
    APP_CHECK(fn != NULL, "resolved pointer for %s is NULL", symbol != NULL ? symbol : "?");
    Dl_info info;
    APP_CHECK(dladdr(fn, &info) != 0 && info.dli_fname != NULL, "dladdr knows no module for %p",
              fn);
    if (module != NULL)
        APP_CHECK(strstr(info.dli_fname, module) != NULL,
                  "%s resolved to %p in %s, expected a module like %s",
                  symbol != NULL ? symbol : "?", fn, info.dli_fname, module);
    if (symbol != NULL && strstr(info.dli_fname, "libcuda.so.1") != NULL && app_hidden_pointers()) {
        /* A cuGetProcAddress answer is then a thunk no exported name covers: the function it
         * stands for must be `symbol` (dlsym answers are still the exported functions). */
        void* (*unhide)(void*) = (void* (*)(void*))fake_symbol("fakecuda_unhide");
        const void* target = unhide((void*)fn);
        if (target != fn) {
            APP_CHECK(info.dli_sname == NULL || info.dli_saddr != fn,
                      "hidden thunk %p is exported as %s", fn, info.dli_sname);
            APP_CHECK(dladdr(target, &info) != 0, "dladdr knows no module for %p", target);
            fn = target;
            ++hidden_thunks_seen;
        }
    }
    if (symbol != NULL && strstr(info.dli_fname, "libcuda.so.1") != NULL)
        APP_CHECK(info.dli_sname != NULL && info.dli_saddr == fn &&
                      strcmp(info.dli_sname, symbol) == 0,
                  "resolved pointer %p is %s in libcuda.so.1, expected %s", fn,
                  info.dli_sname != NULL ? info.dli_sname : "(no symbol)", symbol);
}

void app_expect_resolved(const void* fn, const char* symbol) {
    check_owner(fn, symbol, getenv("APPS_EXPECT_MODULE"));
}

void app_expect_resolved_in(const void* fn, const char* symbol, const char* module) {
    check_owner(fn, symbol, getenv("APPS_EXPECT_MODULE") != NULL ? module : NULL);
}

void app_expect_resolved_any(const void* fn, const char* symbol) {
    check_owner(fn, symbol, NULL);
}

struct ModuleSearch {
    const char* name;
    int found;
};

static int find_module(struct dl_phdr_info* info, size_t size, void* data) {
    (void)size;
    struct ModuleSearch* search = data;
    if (info->dlpi_name != NULL && strstr(info->dlpi_name, search->name) != NULL) search->found = 1;
    return 0;
}

int app_module_loaded(const char* name) {
    struct ModuleSearch search = {name, 0};
    dl_iterate_phdr(find_module, &search);
    return search.found;
}
