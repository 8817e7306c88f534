// Pass 2: the trace's timed records from all threads, merged into one time-ordered stream.
// Each thread's blocks are read in sequence order and hold their records in time order, so a
// k-way merge over threads needs one decoded block per thread: memory stays bounded by the number
// of threads, not the length of the trace.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuleak/format/reader.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

struct Event {
    uint32_t thread;
    const format::Record* record;
};

// Calls `on_event` for every timed record in time order (ties: thread order). Returns false if a
// block could not be read (the warning is added to the trace).
bool for_each_event(LoadedTrace& trace, const std::function<void(const Event&)>& on_event);

} // namespace gpuleak::analyzer
