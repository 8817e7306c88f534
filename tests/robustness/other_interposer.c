/* A second LD_PRELOAD interposer, as found next to gpuleak in clusters. It wraps cuMemAlloc_v2 and
 * cuMemFree_v2 and counts what it saw; at exit it prints "interposer: allocs=N frees=M" on stderr.
 * Built twice:
 *  - libother_interposer.so forwards with dlsym(RTLD_NEXT), the usual way, falling back to a
 *    handle of libcuda.so.1 when the driver is not in the global scope;
 *  - libother_dlsym_interposer.so (HOOK_DLSYM) behaves like HAMi-core: it also replaces dlsym (its
 *    own wrappers for those names, everything else to the real dlsym found with dlvsym, which skips
 *    any other unversioned dlsym, gpuleak's included) and forwards to the functions of its own
 *    libcuda.so.1 handle, never to the next interposer. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_long g_allocs, g_frees;

typedef CUresult (*alloc_fn)(CUdeviceptr*, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef void* (*dlsym_fn)(void*, const char*);

static void* next_function(const char* name);

static dlsym_fn real_dlsym(void) {
#ifdef HOOK_DLSYM
    static dlsym_fn fn;
    if (!fn) fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!fn) fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return fn;
#else
    return dlsym;
#endif
}

static void* next_function(const char* name) {
#ifndef HOOK_DLSYM
    void* p = real_dlsym()(RTLD_NEXT, name);
    if (p) return p;
#endif
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return libcuda ? real_dlsym()(libcuda, name) : NULL;
}

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) {
    static alloc_fn next;
    if (!next) next = (alloc_fn)next_function("cuMemAlloc_v2");
    atomic_fetch_add(&g_allocs, 1);
    return next ? next(dptr, bytes) : CUDA_ERROR_NOT_INITIALIZED;
}

__attribute__((visibility("default"))) CUresult cuMemFree_v2(CUdeviceptr dptr) {
    static free_fn next;
    if (!next) next = (free_fn)next_function("cuMemFree_v2");
    atomic_fetch_add(&g_frees, 1);
    return next ? next(dptr) : CUDA_ERROR_NOT_INITIALIZED;
}

#ifdef HOOK_DLSYM
__attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
    if (!strcmp(name, "cuMemAlloc_v2")) return (void*)cuMemAlloc_v2;
    if (!strcmp(name, "cuMemFree_v2")) return (void*)cuMemFree_v2;
    dlsym_fn fn = real_dlsym();
    return fn ? fn(handle, name) : NULL;
}
#endif

__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "interposer: allocs=%ld frees=%ld\n", atomic_load(&g_allocs),
            atomic_load(&g_frees));
}
