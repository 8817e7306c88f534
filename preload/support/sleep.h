// A sleep for the tracer's test knobs, which stand in for a thread descheduled at the worst moment.
#pragma once

#include <ctime>

namespace gpuleak {

inline void sleep_ms(unsigned ms) {
    timespec delay{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
    nanosleep(&delay, nullptr);
}

} // namespace gpuleak
