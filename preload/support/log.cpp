#include "support/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <fmt/args.h>

#include <cstdlib>
#include <cstring>

#include <strings.h>

namespace gpuleak::log {
namespace {

spdlog::logger& logger() {
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

spdlog::level::level_enum to_spdlog(Level level) {
    switch (level) {
    case Level::debug:
        return spdlog::level::debug;
    case Level::info:
        return spdlog::level::info;
    case Level::warn:
        break;
    }
    return spdlog::level::warn;
}

} // namespace

bool enabled(Level level) {
    return logger().should_log(to_spdlog(level));
}

void write(Level level, std::string_view format, std::initializer_list<Arg> args) {
    try {
        fmt::dynamic_format_arg_store<fmt::format_context> store;
        for (const Arg& a : args) {
            switch (a.kind()) {
            case Arg::Kind::signed_int:
                store.push_back(a.signed_value());
                break;
            case Arg::Kind::unsigned_int:
                store.push_back(a.unsigned_value());
                break;
            case Arg::Kind::text:
                store.push_back(a.text());
                break;
            }
        }
        logger().log(to_spdlog(level), "{}", fmt::vformat(format, store));
    } catch (...) {
        // A format that does not fit its arguments (or no memory): say what was meant.
        try {
            logger().log(to_spdlog(level), "{}", format);
        } catch (...) {
        }
    }
}

} // namespace gpuleak::log
