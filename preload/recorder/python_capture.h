// Bridges the Python frame reader (preload/python) into the thread's trace stream: code objects
// and Python stack nodes are written once, the event carries the innermost node id.
#pragma once

#include <cstdint>

#include "recorder/thread_state.h"

namespace gpuleak::python_capture {

// The calling thread's Python stack id (0 = none). Caller holds ts->lock.
uint64_t capture(ThreadState* ts);
// Python may arrive later through dlopen (an embedded libpython): look again.
void modules_changed();
// At session start: the real dlsym (ours is a hook) and where warnings go.
void init();
void reset_after_fork_child();

} // namespace gpuleak::python_capture
