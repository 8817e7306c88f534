// Training loops built at -O2 whose step ends in a tail call that the step's own DWARF cannot
// name, one per argv[1], for tests/e2e/verdicts_test.cpp. A tail call takes the step's frame off
// the stack, so the callee's allocations sit right under main's call to the step: told apart
// from the step being called again only by what main's call site says it calls. Ground truth
// (40 iterations each):
//   virtual_tail  step keeps 4096 B per iteration (leak), then `return layer->forward()`:
//                 a tail call through a vtable to a layer whose forward allocates transient
//                 buffers
//   chain_tail    step keeps 8192 B per iteration (leak), then tail-calls dispatch(), which
//                 allocates nothing and tail-calls apply(), which allocates transient buffers
//   chain_through_pointer  chain_tail's step, called through a pointer: only the step's own
//                 call sites, and those of the functions it tail-calls, tell the chain
//   inlined_first main calls the step through a pointer (its call site names no function); the
//                 step's first statement is an inlined body keeping 16384 B (leak), placed at
//                 the step's first byte, and its last a tail call to apply()
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define NOINLINE __attribute__((noinline))

namespace {

// A static array, not a vector: a local whose address is taken (push_back's argument) would keep
// a sanitizer build from compiling the tail calls.
void* g_kept[64];
int g_n_kept = 0;

NOINLINE void* must_alloc(size_t n) {
    void* p = nullptr;
    if (cudaMalloc(&p, n) != cudaSuccess) {
        std::fprintf(stderr, "cudaMalloc(%zu) failed\n", n);
        std::exit(1);
    }
    return p;
}

NOINLINE void scratch(size_t n) {
    cudaFree(must_alloc(n));
}

struct Layer {
    virtual ~Layer() = default;
    virtual void forward(int i) = 0;
};

struct Conv final : Layer {
    NOINLINE void forward(int i) override {
        scratch(1000 + i % 3);
        scratch(2000);
    }
};

struct Linear final : Layer {
    NOINLINE void forward(int i) override {
        scratch(3000 + i % 5);
        scratch(4000);
    }
};

// Which layer each step runs, opaque to the optimizer so the call stays virtual.
volatile int g_layer = 0;

NOINLINE void virtual_step(Layer* const* layers, int i) {
    g_kept[g_n_kept++] = must_alloc(4096);
    layers[g_layer]->forward(i);
}

NOINLINE void apply(int i) {
    scratch(5000 + i % 7);
    scratch(6000);
}

NOINLINE void dispatch(int i) {
    apply(i + 1);
}

NOINLINE void chain_step(int i) {
    g_kept[g_n_kept++] = must_alloc(8192);
    dispatch(i);
}

__attribute__((always_inline)) inline void keep_input() {
    g_kept[g_n_kept++] = must_alloc(16384);
}

NOINLINE void inlined_first_step(int i) {
    keep_input();
    apply(i);
}

void (*volatile g_step)(int) = inlined_first_step;
void (*volatile g_chain_step)(int) = chain_step;

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: tail_call_scenarios SCENARIO\n");
        return 2;
    }
    const int n = 40;
    if (std::strcmp(argv[1], "virtual_tail") == 0) {
        Conv conv;
        Linear linear;
        Layer* layers[] = {&conv, &linear};
        for (int i = 0; i < n; ++i)
            virtual_step(layers, i);
    } else if (std::strcmp(argv[1], "chain_tail") == 0) {
        for (int i = 0; i < n; ++i)
            chain_step(i);
    } else if (std::strcmp(argv[1], "chain_through_pointer") == 0) {
        for (int i = 0; i < n; ++i)
            g_chain_step(i);
    } else if (std::strcmp(argv[1], "inlined_first") == 0) {
        for (int i = 0; i < n; ++i)
            g_step(i);
    } else {
        std::fprintf(stderr, "unknown scenario %s\n", argv[1]);
        return 2;
    }
    for (int i = 0; i < g_n_kept; ++i)
        cudaFree(g_kept[i]);
    return 0;
}
