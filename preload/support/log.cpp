#include "support/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gpuleak::log {

spdlog::logger& get() {
    // Not registered with spdlog's global registry: the application may use spdlog too.
    static spdlog::logger* logger = [] {
        auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        auto* l = new spdlog::logger("gpuleak", std::move(sink));
        l->set_pattern("gpuleak: %v");
        const char* level = std::getenv("GPULEAK_LOG");
        auto lvl = spdlog::level::warn;
        if (level) {
            if (!std::strcmp(level, "debug"))
                lvl = spdlog::level::debug;
            else if (!std::strcmp(level, "info"))
                lvl = spdlog::level::info;
            else if (!std::strcmp(level, "off"))
                lvl = spdlog::level::off;
        }
        l->set_level(lvl);
        l->flush_on(spdlog::level::debug);
        return l;
    }();
    return *logger;
}

} // namespace gpuleak::log
