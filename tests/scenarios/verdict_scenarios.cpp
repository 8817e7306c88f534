// Loops with known iteration behaviour, one per argv[1], for the verdict and hint tests
// (tests/e2e/verdicts_test.cpp). Every iteration allocates an input copy and a workspace first (the
// loop body's "once per iteration" sites), so iterations can be inferred as in a real training
// loop. Ground truth, per scenario (30 iterations unless said otherwise):
//
// - leak_every_iteration: keep_output keeps 1000003 B every iteration: leak, 1000003 B/iter.
// - leak_every_third: keep_every_third keeps 3000000 B every 3rd iteration: leak, 1000000 B/iter.
// - leak_every_tenth_first: keep_every_tenth keeps 5000000 B every 10th of 300 iterations, first
//   in the iteration: leak, 500000 B/iter.
// - two_rates: fast_leak 1000000 B every iteration, slow_leak 4000000 B every 4th: leaks, 1 MB/iter
//   each.
// - lru_cache: cache_insert 500000 B, at most 4 kept: retained.
// - sawtooth: accumulate_grad 700000 B, all freed every 4th iteration: retained.
// - kept_past_loop: last_output 800000 B, the previous one freed: retained.
// - growing: grow_buffer 100000*(i+1) B, one live at a time: growth, 100000 B/iter.
// - per_fold: build_encoder 6000000 B + build_head 2000000 B per fold, 5 folds x 6 batches: leaks.
// - layers_then_training: build_layer 2000000 B, six layers built in a loop and kept, then 30
//   training steps: retained (the layers are the model), with the "frees nothing" hint.
// - forward_leak: forward's 1200000 B output kept: leak + forward-pass hint.
// - torch_load_rank: torch_load 50000000 B on device 0, kept: retained + map_location hint (with
//   LOCAL_RANK=1).
// - eval_no_grad: train_step / evaluate, activations of 10000000 B; evaluation keeps all of its
//   batch's graph until the batch ends: eval-vs-train hint.
// - caching_growth: c10::cuda::CUDACachingAllocator::malloc, 2 MiB segments, one 20 MiB segment
//   for a rare large batch (iteration 20), kept: caching-allocator hint.
// - caching_leak: c10::cuda::CUDACachingAllocator::malloc, a 2 MiB segment every 4th iteration,
//   kept (what the cache holds grows because something in the loop keeps its tensors): leak +
//   --per-tensor hint.
// - clean: everything freed each iteration: transient only.
// - thread_per_iteration: a thread started and joined per iteration: thread_scratch 300000 B
//   freed in it (transient), thread_result 600000 B kept (leak, 600000 B/iter).
// - thread_per_iteration_bounded: the same, each result freed in the next iteration: retained.
// - workers_per_epoch: 5 epochs, each running 3 worker threads with a loop of their own:
//   worker_replica 2000000 B allocated before the worker's loop and kept (leak, 6000000
//   B/epoch); the workers' loop bodies transient.
// - workers_per_epoch_bounded: the same, each epoch's replicas freed after the next epoch's
//   workers are joined: retained.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <latch>
#include <thread>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {

void* fail(size_t n) {
    std::fprintf(stderr, "cudaMalloc(%zu) failed\n", n);
    std::exit(1);
}

// A macro, not a helper function: each scenario function must be the innermost frame of its own
// site.
#define MUST_ALLOC(n)                                                                              \
    ({                                                                                             \
        void* p_ = nullptr;                                                                        \
        cudaMalloc(&p_, (n)) == cudaSuccess ? p_ : fail(n);                                        \
    })

std::vector<void*> g_kept;

} // namespace

extern "C" {

NOINLINE void* copy_input() {
    return MUST_ALLOC(65536);
}
NOINLINE void* workspace() {
    return MUST_ALLOC(131072);
}
NOINLINE void* keep_output() {
    return MUST_ALLOC(1000003);
}
NOINLINE void* keep_every_third() {
    return MUST_ALLOC(3000000);
}
NOINLINE void* keep_every_tenth() {
    return MUST_ALLOC(5000000);
}
NOINLINE void* fast_leak() {
    return MUST_ALLOC(1000000);
}
NOINLINE void* slow_leak() {
    return MUST_ALLOC(4000000);
}
NOINLINE void* cache_insert() {
    return MUST_ALLOC(500000);
}
NOINLINE void* accumulate_grad() {
    return MUST_ALLOC(700000);
}
NOINLINE void* last_output() {
    return MUST_ALLOC(800000);
}
NOINLINE void* grow_buffer(size_t n) {
    return MUST_ALLOC(n);
}
NOINLINE void* build_encoder() {
    return MUST_ALLOC(6000000);
}
NOINLINE void* build_head() {
    return MUST_ALLOC(2000000);
}
NOINLINE void* build_layer() {
    return MUST_ALLOC(2000000);
}
NOINLINE void* forward() {
    return MUST_ALLOC(1200000);
}
NOINLINE void* torch_load() {
    return MUST_ALLOC(50000000);
}
NOINLINE void* activation_train() {
    return MUST_ALLOC(10000000);
}
NOINLINE void* activation_eval() {
    return MUST_ALLOC(10000000);
}
NOINLINE void* thread_scratch() {
    return MUST_ALLOC(300000);
}
NOINLINE void* thread_result() {
    return MUST_ALLOC(600000);
}
NOINLINE void* worker_replica() {
    return MUST_ALLOC(2000000);
}

// One loop iteration's fixed part: the sites that allocate exactly once per iteration.
NOINLINE void iteration_body() {
    void* in = copy_input();
    void* ws = workspace();
    cudaFree(ws);
    cudaFree(in);
}

NOINLINE void train_step() {
    iteration_body();
    void* acts[3];
    for (auto& a : acts)
        a = activation_train();
    for (auto& a : acts)
        cudaFree(a); // backward frees the graph
}

NOINLINE void evaluate(int batches) {
    // Without no_grad, every batch's activations stay referenced by the graph until the batch ends.
    for (int b = 0; b < batches; ++b) {
        iteration_body();
        void* acts[3];
        for (auto& a : acts)
            a = activation_eval();
        for (auto& a : acts)
            cudaFree(a);
    }
}

// A thread's whole life, started once per iteration: it has no loop of its own.
NOINLINE void* thread_job() {
    void* scratch = thread_scratch();
    void* result = thread_result();
    cudaFree(scratch);
    return result;
}

// A worker started once per epoch: a model replica made before its own loop over batches. The
// workers of an epoch run at the same time, as they would on a GPU each.
NOINLINE void* worker(int batches, std::latch& all_started) {
    void* replica = worker_replica();
    all_started.arrive_and_wait();
    for (int b = 0; b < batches; ++b)
        iteration_body();
    return replica;
}

} // extern "C"

namespace {
// One epoch: three workers at once; their replicas come back.
std::vector<void*> run_workers() {
    std::vector<void*> replicas(3);
    std::vector<std::thread> workers;
    std::latch all_started(3);
    for (auto& r : replicas)
        workers.emplace_back([&r, &all_started] { r = worker(10, all_started); });
    for (auto& w : workers)
        w.join();
    return replicas;
}

void* run_in_a_thread() {
    void* result = nullptr;
    std::thread worker([&] { result = thread_job(); });
    worker.join();
    return result;
}
} // namespace

namespace c10::cuda::CUDACachingAllocator {
NOINLINE void* malloc(size_t n) {
    return MUST_ALLOC(n);
}
} // namespace c10::cuda::CUDACachingAllocator

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: verdict_scenarios SCENARIO\n");
        return 2;
    }
    const char* s = argv[1];
    const int n = 30;
    auto is = [&](const char* name) { return std::strcmp(s, name) == 0; };
    if (is("leak_every_iteration")) {
        for (int i = 0; i < n; ++i)
            iteration_body(), g_kept.push_back(keep_output());
    } else if (is("leak_every_third")) {
        for (int i = 0; i < n; ++i) {
            iteration_body();
            if (i % 3 == 0) g_kept.push_back(keep_every_third());
        }
    } else if (is("leak_every_tenth_first")) {
        // The iterations that keep go back to another line than the others do.
        for (int i = 0; i < 10 * n; ++i) {
            if (i % 10 == 0) g_kept.push_back(keep_every_tenth());
            iteration_body();
        }
    } else if (is("two_rates")) {
        for (int i = 0; i < n; ++i) {
            iteration_body();
            g_kept.push_back(fast_leak());
            if (i % 4 == 0) g_kept.push_back(slow_leak());
        }
    } else if (is("lru_cache")) {
        std::deque<void*> cache;
        for (int i = 0; i < n; ++i) {
            iteration_body();
            cache.push_back(cache_insert());
            if (cache.size() > 4) cudaFree(cache.front()), cache.pop_front();
        }
        for (void* p : cache)
            cudaFree(p);
    } else if (is("sawtooth")) {
        std::vector<void*> grads;
        for (int i = 0; i < n; ++i) {
            iteration_body();
            grads.push_back(accumulate_grad());
            if (grads.size() == 4) {
                for (void* p : grads)
                    cudaFree(p);
                grads.clear();
            }
        }
        for (void* p : grads)
            cudaFree(p);
    } else if (is("kept_past_loop")) {
        void* previous = nullptr;
        for (int i = 0; i < n; ++i) {
            iteration_body();
            void* out = last_output();
            if (previous) cudaFree(previous);
            previous = out;
        }
        cudaFree(previous); // used after the loop, then released
    } else if (is("growing")) {
        void* buffer = nullptr;
        for (int i = 0; i < n; ++i) {
            iteration_body();
            void* bigger = grow_buffer(100000 * static_cast<size_t>(i + 1));
            if (buffer) cudaFree(buffer);
            buffer = bigger;
        }
        g_kept.push_back(buffer);
    } else if (is("per_fold")) {
        for (int fold = 0; fold < 5; ++fold) {
            g_kept.push_back(build_encoder());
            g_kept.push_back(build_head());
            for (int b = 0; b < 6; ++b)
                iteration_body();
        }
    } else if (is("layers_then_training")) {
        for (int layer = 0; layer < 6; ++layer)
            g_kept.push_back(build_layer());
        for (int i = 0; i < n; ++i)
            iteration_body();
    } else if (is("forward_leak")) {
        for (int i = 0; i < n; ++i)
            iteration_body(), g_kept.push_back(forward());
    } else if (is("torch_load_rank")) {
        g_kept.push_back(torch_load());
        for (int i = 0; i < n; ++i)
            iteration_body();
    } else if (is("eval_no_grad")) {
        for (int i = 0; i < n; ++i)
            train_step();
        evaluate(10);
    } else if (is("caching_growth")) {
        using c10::cuda::CUDACachingAllocator::malloc;
        for (int i = 0; i < n; ++i) {
            iteration_body();
            if (i < 3) g_kept.push_back(malloc(2 << 20)); // the steady segments, kept by the cache
            if (i == 20)
                g_kept.push_back(malloc(20 << 20)); // one rare large batch: a segment kept for good
        }
    } else if (is("caching_leak")) {
        using c10::cuda::CUDACachingAllocator::malloc;
        for (int i = 0; i < n; ++i) {
            iteration_body();
            if (i % 4 == 0) g_kept.push_back(malloc(2 << 20));
        }
    } else if (is("thread_per_iteration")) {
        for (int i = 0; i < n; ++i)
            iteration_body(), g_kept.push_back(run_in_a_thread());
    } else if (is("thread_per_iteration_bounded")) {
        void* previous = nullptr;
        for (int i = 0; i < n; ++i) {
            iteration_body();
            void* result = run_in_a_thread();
            if (previous) cudaFree(previous);
            previous = result;
        }
        cudaFree(previous);
    } else if (is("workers_per_epoch")) {
        for (int epoch = 0; epoch < 5; ++epoch)
            for (void* r : run_workers())
                g_kept.push_back(r);
    } else if (is("workers_per_epoch_bounded")) {
        std::vector<void*> previous;
        for (int epoch = 0; epoch < 5; ++epoch) {
            std::vector<void*> replicas = run_workers();
            for (void* r : previous)
                cudaFree(r);
            previous = replicas;
        }
        for (void* r : previous)
            cudaFree(r);
    } else if (is("clean")) {
        for (int i = 0; i < n; ++i)
            iteration_body();
    } else {
        std::fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    return 0;
}
