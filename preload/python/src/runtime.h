// Finds the interpreter in this process (if any) and picks its layout, once.
#pragma once

#include <cstdint>

#include "layout.h"

namespace gpuleak::python {

struct Runtime {
    void* (*this_thread_state)(); // PyGILState_GetThisThreadState
    int (*is_initialized)();
    int (*is_finalizing)();
    uintptr_t code_type, str_type, bytes_type;
    Layout layout;
};

// The detected, supported interpreter, or nullptr. While none is known, a call occasionally
// retries (every few thousand calls, or after notify_modules_changed()), so a libpython that is
// dlopen'ed later is still found; everything else is one atomic load.
const Runtime* runtime();

// A detection interrupted by fork() in another thread must not block the child forever.
void reset_detection_after_fork();

} // namespace gpuleak::python
