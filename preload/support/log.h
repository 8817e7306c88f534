// The preload's few diagnostics, printed as "gpuleak: <message>" on stderr.
//
// Callers see only this header: the arguments are erased into a handful of plain types and
// formatted in log.cpp, which builds each line on the stack and writes it with one write(2): no
// logging library inside the application's process (spdlog and fmt were, header-only, and their
// one file was the slowest compile of the project), no heap, no lock, errno left as it was.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace gpuleak::log {

enum class Level { debug, info, warn };

// One argument of a message: "{}" in the format takes the next one. Only the plain "{}" is
// meant; a format that does not fit its arguments prints the format itself, never throws.
class Arg {
public:
    enum class Kind { signed_int, unsigned_int, text };

    template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
        Arg(T value) { // NOLINT(google-explicit-constructor): arguments convert as in printf
        if constexpr (std::is_signed_v<T>) {
            kind_ = Kind::signed_int;
            signed_ = value;
        } else {
            kind_ = Kind::unsigned_int;
            unsigned_ = value;
        }
    }
    Arg(const char* text) : kind_(Kind::text), text_(text ? text : "(null)") {}
    Arg(std::string_view text) : kind_(Kind::text), text_(text) {}
    Arg(const std::string& text) : kind_(Kind::text), text_(text) {}

    Kind kind() const { return kind_; }
    int64_t signed_value() const { return signed_; }
    uint64_t unsigned_value() const { return unsigned_; }
    std::string_view text() const { return text_; }

private:
    Kind kind_;
    int64_t signed_ = 0;
    uint64_t unsigned_ = 0;
    std::string_view text_;
};

// Reads GPULEAK_LOG (debug|info|warn|off, default warn) once; safe to call repeatedly.
bool enabled(Level level);
void write(Level level, std::string_view format, std::initializer_list<Arg> args);

template <typename... Args> void warn(std::string_view format, const Args&... args) {
    if (enabled(Level::warn)) write(Level::warn, format, {Arg(args)...});
}
template <typename... Args> void info(std::string_view format, const Args&... args) {
    if (enabled(Level::info)) write(Level::info, format, {Arg(args)...});
}
template <typename... Args> void debug(std::string_view format, const Args&... args) {
    if (enabled(Level::debug)) write(Level::debug, format, {Arg(args)...});
}

} // namespace gpuleak::log
