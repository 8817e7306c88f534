// A stand-in for the device thread of torch::autograd::Engine. PyTorch runs the CUDA part of
// backward() on a thread of the engine's own, which makes the gradients: its stacks hold no
// Python frame and no frame of the program's own code, only libtorch's, which is what the analyzer
// must cope with. fake_torch (autograd.py) hands it the gradients' sizes through ctypes and waits,
// as loss.backward() waits for the engine. Gradients are one cudaMalloc each, as under
// PYTORCH_NO_CUDA_MEMORY_CACHING; the caller frees them.
#include <dlfcn.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>

namespace at::native {

// at::empty_cuda without the caching allocator: a cudaMalloc of the runtime fake_torch loaded.
__attribute__((noinline)) void* empty_cuda(size_t nbytes) {
    using Malloc = int (*)(void**, size_t);
    static const Malloc cuda_malloc =
        reinterpret_cast<Malloc>(dlsym(dlopen("libcudart.so.13", RTLD_NOW), "cudaMalloc"));
    void* p = nullptr;
    return cuda_malloc && cuda_malloc(&p, nbytes) == 0 ? p : nullptr;
}

} // namespace at::native

namespace torch::autograd {

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
        task.grads[i] = at::native::empty_cuda(task.sizes[i]);
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
