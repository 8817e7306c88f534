// A stand-in for the device thread of torch::autograd::Engine. PyTorch runs the CUDA part of
// backward() on a thread of the engine's own, which makes the gradients: its stacks hold no
// Python frame and no frame of the program's own code, only libtorch's, which is what the analyzer
// must cope with. fake_torch (autograd.py) hands it the gradients' sizes through ctypes and waits,
// as loss.backward() waits for the engine, and gives gradients back through fake_autograd_free.
// With FAKE_TORCH_CACHING=1 (and caching not turned off, as in fake_torch) they come from a native
// stand-in for PyTorch's device cache, else each is a cudaMalloc of its own.
#include <dlfcn.h>

#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace at::native {

template <class F> F runtime_function(const char* name) {
    return reinterpret_cast<F>(dlsym(dlopen("libcudart.so.13", RTLD_NOW), name));
}

// at::empty_cuda without the caching allocator: a cudaMalloc of the runtime fake_torch loaded.
__attribute__((noinline)) void* empty_cuda(size_t nbytes) {
    static const auto cuda_malloc = runtime_function<int (*)(void**, size_t)>("cudaMalloc");
    void* p = nullptr;
    return cuda_malloc && cuda_malloc(&p, nbytes) == 0 ? p : nullptr;
}

void free_cuda(void* p) {
    static const auto cuda_free = runtime_function<int (*)(void*)>("cudaFree");
    if (cuda_free) cuda_free(p);
}

} // namespace at::native

namespace c10::cuda::CUDACachingAllocator::Native {

// PyTorch's device cache as far as gradients go: a freed block serves the next request of its
// size (every step asks for the same sizes), and segments never go back to the driver.
class DeviceCachingAllocator {
public:
    static bool on() {
        static const bool caching = [] {
            const char* fake = std::getenv("FAKE_TORCH_CACHING");
            const char* off = std::getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
            return fake && std::strcmp(fake, "1") == 0 && !(off && *off && std::strcmp(off, "0"));
        }();
        return caching;
    }

    __attribute__((noinline)) void* malloc(size_t nbytes) {
        {
            std::lock_guard lock(mutex_);
            std::vector<void*>& cached = free_[nbytes];
            if (!cached.empty()) {
                void* p = cached.back();
                cached.pop_back();
                return p;
            }
        }
        return at::native::empty_cuda(nbytes); // a segment of its own
    }

    void free(void* p, size_t nbytes) {
        std::lock_guard lock(mutex_);
        free_[nbytes].push_back(p);
    }

private:
    std::mutex mutex_;
    std::map<size_t, std::vector<void*>> free_;
};

DeviceCachingAllocator& device_allocator() {
    static DeviceCachingAllocator* allocator = new DeviceCachingAllocator; // outlives exit
    return *allocator;
}

} // namespace c10::cuda::CUDACachingAllocator::Native

namespace {

namespace cache = c10::cuda::CUDACachingAllocator::Native;

void* gradient(size_t nbytes) {
    return cache::DeviceCachingAllocator::on() ? cache::device_allocator().malloc(nbytes)
                                               : at::native::empty_cuda(nbytes);
}

} // namespace

// A graph's nodes make their gradients through code of their own kind, as libtorch's generated
// backward functions do: the engine's stacks differ from one gradient to the next below
// evaluate_function.
namespace torch::autograd::generated {

struct AddmmBackward0 {
    __attribute__((noinline)) static void* apply(size_t nbytes) { return gradient(nbytes); }
};
struct ReluBackward0 {
    __attribute__((noinline)) static void* apply(size_t nbytes) { return gradient(nbytes); }
};

} // namespace torch::autograd::generated

namespace torch::autograd {

struct AccumulateGrad {
    __attribute__((noinline)) static void* apply(size_t nbytes) { return gradient(nbytes); }
};

struct GraphTask {
    const size_t* sizes;
    size_t count;
    void** grads;
    bool done = false;
};

class Engine {
public:
    // Never destroyed: its thread waits for work until the process exits, as PyTorch's does.
    static Engine& get() {
        static Engine* engine = new Engine;
        return *engine;
    }

    void execute(GraphTask& task) {
        std::unique_lock lock(mutex_);
        ready_.push_back(&task);
        changed_.notify_all();
        changed_.wait(lock, [&] { return task.done; });
    }

private:
    Engine() {
        std::thread([this] { thread_main(); }).detach();
    }

    __attribute__((noinline)) void thread_main() {
        for (;;) {
            GraphTask* task = nullptr;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] { return !ready_.empty(); });
                task = ready_.front();
                ready_.pop_front();
            }
            for (size_t i = 0; i < task->count; ++i)
                evaluate_function(*task, i);
            std::lock_guard lock(mutex_);
            task->done = true;
            changed_.notify_all();
        }
    }

    __attribute__((noinline)) void evaluate_function(GraphTask& task, size_t i) {
        task.grads[i] = call_function(i % 3, task.sizes[i]);
    }

    __attribute__((noinline)) static void* call_function(size_t kind, size_t nbytes) {
        switch (kind) {
        case 0:
            return generated::AddmmBackward0::apply(nbytes);
        case 1:
            return generated::ReluBackward0::apply(nbytes);
        default:
            return AccumulateGrad::apply(nbytes);
        }
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<GraphTask*> ready_;
};

} // namespace torch::autograd

// grads[i]: a gradient of sizes[i] bytes made on the engine's thread (null where it failed).
extern "C" __attribute__((visibility("default"))) void
fake_autograd_backward(const size_t* sizes, size_t count, void** grads) {
    torch::autograd::GraphTask task{sizes, count, grads};
    torch::autograd::Engine::get().execute(task);
}

// A gradient of nbytes dropped (zero_grad): back to the cache, or to the driver.
extern "C" __attribute__((visibility("default"))) void fake_autograd_free(void* grad,
                                                                          size_t nbytes) {
    if (cache::DeviceCachingAllocator::on())
        cache::device_allocator().free(grad, nbytes);
    else
        at::native::free_cuda(grad);
}
