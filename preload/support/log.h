// The preload's few diagnostics. spdlog and fmt are compiled header-only into libgpuleak.so with
// hidden visibility, so they can never bind to (or be bound by) an application's own spdlog or fmt.
#pragma once

#include <spdlog/spdlog.h>

namespace gpuleak::log {

// Reads GPULEAK_LOG (debug|info|warn|off, default warn) once; safe to call repeatedly.
spdlog::logger& get();

template <typename... Args> void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    get().warn(fmt, std::forward<Args>(args)...);
}
template <typename... Args> void info(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    get().info(fmt, std::forward<Args>(args)...);
}
template <typename... Args> void debug(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    get().debug(fmt, std::forward<Args>(args)...);
}

} // namespace gpuleak::log
