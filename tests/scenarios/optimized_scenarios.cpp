// Training loops built optimized, as release builds are, for the site names of
// tests/e2e/verdicts_test.cpp and the baseline test of tests/exports (built at -O3 and at -O2),
// one per argv[1]:
//   cloned_helper  at -O3 GCC makes a clone of forward() for each constant size it is called
//                  with ("forward(unsigned long) [clone .constprop.N]"), so the loop's two
//                  allocations sit under two names of one function. 16 iterations: the activation
//                  (1 MiB, the line marked ACTIVATION) is freed within its iteration
//                  (transient); the output (256 KiB, the line marked OUTPUT) is kept every
//                  iteration (leak).
//   split_pool     a pool's get() whose slow path (the cudaMalloc) GCC splits off and inlines
//                  back, so DWARF shows get() inlined into get(). 16 iterations: one block taken
//                  and given back (the line marked REUSED: allocated once, retained), one taken
//                  and kept (the line marked TAKEN: leak).
//   one_line       two calls of forward() on one line (the line marked ONE LINE), 16 iterations:
//                  forward(1 << 18) kept (leak), forward(1 << 20) freed (transient).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void* g_kept[64];
int g_n_kept = 0;

__attribute__((noinline)) void* forward(size_t n) {
    void* p = nullptr;
    if (cudaMalloc(&p, n) != cudaSuccess) {
        std::fprintf(stderr, "cudaMalloc(%zu) failed\n", n);
        std::exit(1);
    }
    return p;
}

void cloned_helper() {
    for (int step = 0; step < 16; ++step) {
        void* activation = forward(1 << 20); // ACTIVATION
        void* output = forward(1 << 18);     // OUTPUT
        g_kept[g_n_kept++] = output;
        cudaFree(activation);
    }
}

struct Pool {
    void* free_list[64];
    int n_free = 0;
    void* get(size_t n) {
        if (n_free > 0) return free_list[--n_free];
        void* p = nullptr;
        if (cudaMalloc(&p, n) != cudaSuccess) std::exit(1);
        return p;
    }
    void put(void* p) { free_list[n_free++] = p; }
};

void split_pool() {
    Pool pool;
    for (int step = 0; step < 16; ++step) {
        void* scratch = pool.get(1 << 20); // REUSED
        void* kept = pool.get(1 << 18);    // TAKEN
        pool.put(scratch);
        g_kept[g_n_kept++] = kept;
    }
}

// clang-format off
void one_line() {
    for (int step = 0; step < 16; ++step) {
        g_kept[g_n_kept++] = forward(1 << 18); cudaFree(forward(1 << 20)); // ONE LINE
    }
}
// clang-format on

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "cloned_helper") == 0) {
        cloned_helper();
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "split_pool") == 0) {
        split_pool();
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "one_line") == 0) {
        one_line();
        return 0;
    }
    std::fprintf(stderr, "usage: optimized_scenarios cloned_helper|split_pool|one_line\n");
    return 2;
}
