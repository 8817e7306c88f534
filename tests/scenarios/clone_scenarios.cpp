// A training loop built at -O3, as release builds are, for tests/e2e/verdicts_test.cpp: GCC
// makes a clone of forward() for each constant size it is called with ("forward(unsigned long)
// [clone .constprop.N]"), so the loop's two allocations sit under two names of one function.
// Ground truth (argv[1] = cloned_helper, 16 iterations): the activation (1 MiB, the line marked
// ACTIVATION) is freed within its iteration (transient); the output (256 KiB, the line marked
// OUTPUT) is kept every iteration (leak).
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

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "cloned_helper") == 0) {
        cloned_helper();
        return 0;
    }
    std::fprintf(stderr, "usage: clone_scenarios cloned_helper\n");
    return 2;
}
