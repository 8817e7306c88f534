// Problems reported to the preload's log at most once each per process.
#pragma once

namespace gpuleak::python {

enum class Warning {
    Unsupported,    // this interpreter's layout is unknown: capture is off for good
    Finalizing,     // Py_IsFinalizing(): thread states may be freed under us
    Subinterpreter, // the thread belongs to a subinterpreter
    OutOfMemory,    // the code registry could not grow
    kCount,
};

void warn_once(Warning which, const char* message);

} // namespace gpuleak::python
