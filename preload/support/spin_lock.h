// The preload's one spin lock. It guards what is held for a few instructions and never across a
// call that could block or re-enter: a thread's event buffer (the owner takes it per event, the
// writer thread only try_locks it every flush interval) and the Python code registry (a few hash
// probes per frame). Cheaper than a mutex there; under contention it pauses briefly, then yields
// to the holder.
#pragma once

#include <atomic>

#include <sched.h>

namespace gpuleak {

class SpinLock {
public:
    void lock() {
        for (unsigned spins = 0; flag_.exchange(true, std::memory_order_acquire);) {
            while (flag_.load(std::memory_order_relaxed)) {
                if (++spins < 64)
                    __builtin_ia32_pause();
                else
                    sched_yield();
            }
        }
    }
    bool try_lock() { return !flag_.exchange(true, std::memory_order_acquire); }
    void unlock() { flag_.store(false, std::memory_order_release); }
    // After fork only the forking thread exists: a lock held by another thread would never be
    // released.
    void reset() { flag_.store(false, std::memory_order_relaxed); }

private:
    std::atomic<bool> flag_{false};
};

} // namespace gpuleak
