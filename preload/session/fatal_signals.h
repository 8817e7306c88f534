// Flushing the trace when a signal is about to end the process (SIGSEGV, SIGABRT, SIGTERM, ...),
// then letting the signal do exactly what it would have done without the tracer.
#pragma once

namespace gpuleak::fatal_signals {

// Installs the handlers once per process image (a forked child keeps its parent's), from the
// session start. Signals that are ignored are left alone. A handler the application installs later
// replaces ours, and ours is then never reinstalled.
void install();

} // namespace gpuleak::fatal_signals
