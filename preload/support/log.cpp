#include "support/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <cstring>

#include <mutex>
#include <strings.h>

namespace gpuleak::log {

spdlog::logger& get() {
    // Not registered with spdlog's global registry: the application may use spdlog too.
    static spdlog::logger* logger = [] {
        auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        auto* l = new spdlog::logger("gpuleak", std::move(sink));
        l->set_pattern("gpuleak: %v");
        const char* level = std::getenv("GPULEAK_LOG");
        auto lvl = spdlog::level::warn;
        bool known = true;
        if (level && *level) {
            if (!strcasecmp(level, "debug"))
                lvl = spdlog::level::debug;
            else if (!strcasecmp(level, "info"))
                lvl = spdlog::level::info;
            else if (!strcasecmp(level, "off"))
                lvl = spdlog::level::off;
            else
                known = !strcasecmp(level, "warn");
        }
        l->set_level(lvl);
        l->flush_on(spdlog::level::debug);
        if (!known) l->warn("GPULEAK_LOG={}: not one of debug, info, warn, off; using warn", level);
        return l;
    }();
    return *logger;
}

} // namespace gpuleak::log
