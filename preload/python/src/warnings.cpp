#include "warnings.h"

#include <atomic>

#include "python_stack.h"

namespace gpuleak::python {
namespace {

std::atomic<void (*)(const char*)> g_sink{nullptr};
std::atomic<bool> g_warned[static_cast<int>(Warning::kCount)];

} // namespace

void set_warning_sink(void (*sink)(const char* message)) {
    g_sink.store(sink, std::memory_order_release);
}

void warn_once(Warning which, const char* message) {
    if (g_warned[static_cast<int>(which)].exchange(true, std::memory_order_relaxed)) return;
    if (auto sink = g_sink.load(std::memory_order_acquire)) sink(message);
}

} // namespace gpuleak::python
