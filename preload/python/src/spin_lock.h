// The registry's lock. Held for a few hash probes per frame and never across a call that could
// block or re-enter, so spinning beats a futex; after a burst it yields to the holder.
#pragma once

#include <atomic>

#include <sched.h>

namespace gpuleak::python {

class SpinLock {
public:
    void lock() {
        for (unsigned spins = 0; flag_.exchange(true, std::memory_order_acquire); ++spins) {
            while (flag_.load(std::memory_order_relaxed)) {
                if (++spins < 64) {
                    __builtin_ia32_pause();
                } else {
                    sched_yield();
                }
            }
        }
    }
    void unlock() { flag_.store(false, std::memory_order_release); }
    // In a forked child the holder may be a thread that no longer exists.
    void reset() { flag_.store(false, std::memory_order_relaxed); }

private:
    std::atomic<bool> flag_{false};
};

} // namespace gpuleak::python
