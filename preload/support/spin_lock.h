#pragma once

#include <atomic>

#include <sched.h>

namespace gpuleak {

// Guards one thread's event buffer. The owner takes it for every event and the writer thread only
// every flush interval, so it is almost never contended and much cheaper than a mutex.
class SpinLock {
public:
    void lock() {
        while (flag_.exchange(true, std::memory_order_acquire)) {
            while (flag_.load(std::memory_order_relaxed))
                sched_yield();
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
