/* alloc_loop: the workloads of scripts/bench.sh, one per tracer cost it compares.
 *
 *   alloc_loop MODE DEPTH PAIRS [THREADS]
 *
 * MODE
 *   cuda      PAIRS cudaMalloc/cudaFree pairs (fake runtime) at DEPTH frames: traced by gpuleak
 *   malloc    the same loop with malloc/free: what heaptrack traces
 *   unwind    the same loop calling only unw_backtrace: the native-stack floor of both tracers
 *   cudafree  PAIRS cudaFree calls of an address never allocated: a free event, no unwind, no alloc
 *   mixed-cuda, mixed-malloc
 *             PAIRS operations over 4096 slots: free what the slot holds, allocate a random size
 *             (64 B .. 2 MiB) from one of 2000 call paths 20..43 frames deep. Random lifetimes,
 *             many stacks, the same sequence for both allocators (fixed seed).
 * DEPTH    frames on the stack at the allocation call, counted the way an unwinder counts them
 *          from the call site outward (main and the C library's start frames included).
 * THREADS  threads sharing the PAIRS (default 1). Each thread descends DEPTH frames itself.
 *
 * Prints one line: "mode=... depth=... pairs=... threads=... loop_cpu_ns=... loop_wall_ns=..."
 * where the times cover only the loops (process CPU, so a tracer's own threads are included). The
 * bench script measures whole process trees besides (a tracer's helper processes count too). */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum mode {
    MODE_CUDA,
    MODE_MALLOC,
    MODE_UNWIND,
    MODE_CUDAFREE,
    MODE_MIXED_CUDA,
    MODE_MIXED_MALLOC
};

static enum mode g_mode;
static int g_depth;
static long g_pairs;
static int g_threads = 1;
static int g_base_frames; /* frames below the recursion, measured once per kind of thread */
static int g_thread_base_frames;
static int (*g_unw_backtrace)(void**, int);
static int g_unwound; /* frames the last unw_backtrace returned (unwind mode) */

static void fail(const char* what) {
    fprintf(stderr, "alloc_loop: %s\n", what);
    exit(1);
}

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- the repetitive loop ------------------------------------------------------------------ */

__attribute__((noinline)) static void pair_loop(long pairs) {
    void* frames[512];
    switch (g_mode) {
    case MODE_CUDA:
        for (long i = 0; i < pairs; ++i) {
            void* p = NULL;
            if (cudaMalloc(&p, 256) != cudaSuccess) fail("cudaMalloc failed");
            if (cudaFree(p) != cudaSuccess) fail("cudaFree failed");
        }
        break;
    case MODE_MALLOC:
        for (long i = 0; i < pairs; ++i) {
            void* volatile p = malloc(256); /* volatile: the pair cannot be optimized away */
            free(p);
        }
        break;
    case MODE_UNWIND:
        for (long i = 0; i < pairs; ++i) {
            g_unwound = g_unw_backtrace(frames, 512);
        }
        break;
    case MODE_CUDAFREE:
        /* Never allocated: the driver rejects it, and a tracer still records the free (and its
         * result). */
        for (long i = 0; i < pairs; ++i)
            (void)cudaFree((void*)(uintptr_t)(0x1000 + (i & 255) * 64));
        break;
    default:
        break;
    }
}

/* One frame per level; the empty asm after the call keeps it from becoming a tail call. */
__attribute__((noinline)) static void descend(int levels, long pairs) {
    if (levels <= 0)
        pair_loop(pairs);
    else
        descend(levels - 1, pairs);
    __asm__ volatile("" ::: "memory");
}

/* --- the mixed workload ----------------------------------------------------------------------- */

enum { kSlots = 4096, kSites = 2000, kSiteDigits = 6 };

struct mixed {
    uint64_t rng;
    int site;
    int digit;
    void* slots[kSlots];
};

static uint64_t next_random(uint64_t* s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void mixed_op(struct mixed* m) {
    uint64_t r = next_random(&m->rng);
    void** slot = &m->slots[r % kSlots];
    size_t size = ((size_t)64 << ((r >> 12) % 16)) + ((r >> 20) & 63) * 8;
    if (g_mode == MODE_MIXED_CUDA) {
        if (*slot && cudaFree(*slot) != cudaSuccess) fail("cudaFree failed");
        if (cudaMalloc(slot, size) != cudaSuccess) fail("cudaMalloc failed");
    } else {
        free(*slot);
        *slot = malloc(size);
    }
}

static void mixed_step(struct mixed* m, int extra);

/* Four distinct functions: the base-4 digits of a site id choose the path through them. */
#define MIXED_FN(n)                                                                                \
    __attribute__((noinline)) static void mixed_f##n(struct mixed* m, int extra) {                 \
        mixed_step(m, extra);                                                                      \
        __asm__ volatile("" ::: "memory");                                                         \
    }
MIXED_FN(0)
MIXED_FN(1)
MIXED_FN(2)
MIXED_FN(3)

__attribute__((noinline)) static void mixed_step(struct mixed* m, int extra) {
    static void (*const fns[4])(struct mixed*, int) = {mixed_f0, mixed_f1, mixed_f2, mixed_f3};
    if (m->digit < kSiteDigits) {
        int d = (m->site >> (2 * m->digit)) & 3;
        m->digit++;
        fns[d](m, extra);
    } else if (extra > 0) {
        mixed_step(m, extra - 1);
    } else {
        mixed_op(m);
    }
    __asm__ volatile("" ::: "memory");
}

static void mixed_loop(long ops, uint64_t seed) {
    struct mixed* m = calloc(1, sizeof *m);
    if (!m) fail("out of memory");
    m->rng = seed;
    for (long i = 0; i < ops; ++i) {
        m->site = (int)(next_random(&m->rng) % kSites);
        m->digit = 0;
        mixed_step(m, m->site % 24); /* 20..43 frames at the allocation */
    }
    for (int i = 0; i < kSlots; ++i) {
        if (!m->slots[i]) continue;
        if (g_mode == MODE_MIXED_CUDA)
            (void)cudaFree(m->slots[i]);
        else
            free(m->slots[i]);
    }
    free(m);
}

/* --- threads and calibration ---------------------------------------------------------------- */

__attribute__((noinline)) static int frames_here(void) {
    void* frames[64];
    return backtrace(frames, 64) - 1; /* without frames_here itself */
}

struct job {
    long pairs;
    uint64_t seed;
};

__attribute__((noinline)) static void run_job(const struct job* j, int base_frames) {
    if (g_mode == MODE_MIXED_CUDA || g_mode == MODE_MIXED_MALLOC) {
        mixed_loop(j->pairs, j->seed);
        return;
    }
    /* pair_loop + (levels + 1) x descend + run_job + the caller's frames = DEPTH. glibc's
       backtrace() counts _start (or clone3) too, which libunwind does not report. */
    int levels = g_depth - (base_frames - 1) - 3;
    descend(levels < 0 ? 0 : levels, j->pairs);
}

static void* thread_main(void* p) {
    run_job(p, g_thread_base_frames);
    return NULL;
}

static void* thread_frames(void* out) {
    *(int*)out = frames_here();
    return NULL;
}

int main(int argc, char** argv) {
    if (argc < 4)
        fail("usage: alloc_loop cuda|malloc|unwind|cudafree|mixed-cuda|mixed-malloc DEPTH PAIRS "
             "[THREADS]");
    const char* names[] = {"cuda", "malloc", "unwind", "cudafree", "mixed-cuda", "mixed-malloc"};
    int found = 0;
    for (int i = 0; i < 6; ++i)
        if (!strcmp(argv[1], names[i])) g_mode = (enum mode)i, found = 1;
    if (!found) fail("unknown mode");
    g_depth = atoi(argv[2]);
    g_pairs = atol(argv[3]);
    if (argc > 4) g_threads = atoi(argv[4]);
    if (g_depth < 1 || g_depth > 400 || g_pairs < 1 || g_threads < 1 || g_threads > 64)
        fail("bad arguments");

    if (g_mode == MODE_UNWIND) {
        /* Private, as libgpuleak.so loads it; the same caching policy as libgpuleak and heaptrack.
         */
        void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
        if (!lib) fail("libunwind.so.8 not found");
        g_unw_backtrace = (int (*)(void**, int))dlsym(lib, "unw_backtrace");
        int (*set_caching)(void*, int) =
            (int (*)(void*, int))dlsym(lib, "_ULx86_64_set_caching_policy");
        void** space = (void**)dlsym(lib, "_ULx86_64_local_addr_space");
        if (!g_unw_backtrace) fail("no unw_backtrace");
        if (set_caching && space) set_caching(*space, 2 /* UNW_CACHE_PER_THREAD */);
    }
    /* main -> run_job: frames_here counts from main outward when called from main. */
    g_base_frames = frames_here();
    pthread_t t;
    if (pthread_create(&t, NULL, thread_frames, &g_thread_base_frames) != 0) fail("pthread_create");
    pthread_join(t, NULL);
    if (g_mode == MODE_CUDA || g_mode == MODE_CUDAFREE || g_mode == MODE_MIXED_CUDA) {
        /* Runtime and driver initialization stay out of the measured loop. */
        void* p = NULL;
        if (cudaMalloc(&p, 256) != cudaSuccess || cudaFree(p) != cudaSuccess)
            fail("CUDA init failed");
    }

    struct job jobs[64];
    for (int i = 0; i < g_threads; ++i) {
        jobs[i].pairs = g_pairs / g_threads + (i < g_pairs % g_threads);
        jobs[i].seed = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
    }
    uint64_t cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), wall0 = clock_ns(CLOCK_MONOTONIC);
    if (g_threads == 1) {
        run_job(&jobs[0], g_base_frames);
    } else {
        pthread_t threads[64];
        for (int i = 0; i < g_threads; ++i)
            if (pthread_create(&threads[i], NULL, thread_main, &jobs[i]) != 0)
                fail("pthread_create");
        for (int i = 0; i < g_threads; ++i)
            pthread_join(threads[i], NULL);
    }
    uint64_t cpu1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), wall1 = clock_ns(CLOCK_MONOTONIC);
    printf("mode=%s depth=%d pairs=%ld threads=%d loop_cpu_ns=%llu loop_wall_ns=%llu", argv[1],
           g_depth, g_pairs, g_threads, (unsigned long long)(cpu1 - cpu0),
           (unsigned long long)(wall1 - wall0));
    if (g_mode == MODE_UNWIND) printf(" frames=%d", g_unwound);
    printf("\n");
    return 0;
}
