#include "common/format_util.h"

#include <algorithm>
#include <cstdio>

#include "symbolize/demangle.h"

namespace gpuleak::analyzer {

std::string human_bytes(uint64_t bytes) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) return std::to_string(bytes) + " B";
    double v = static_cast<double>(bytes);
    int unit = 0;
    while (v >= 1024 && unit < 5) {
        v /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf,
                  v < 10    ? "%.2f %s"
                  : v < 100 ? "%.1f %s"
                            : "%.0f %s",
                  v, kUnits[unit]);
    return buf;
}

std::string growth_rate(double bytes_per_iteration) {
    double rate = std::max(0.0, bytes_per_iteration);
    std::string out = "+";
    if (rate >= 1 || rate == 0) {
        out += human_bytes(static_cast<uint64_t>(rate));
        out += "/iteration";
        return out;
    }
    uint64_t iterations = 10;
    while (rate * static_cast<double>(iterations) < 10 && iterations < 1'000'000'000)
        iterations *= 10;
    out += human_bytes(static_cast<uint64_t>(rate * static_cast<double>(iterations) + 0.5));
    out += " per ";
    out += with_commas(iterations);
    out += " iterations";
    return out;
}

std::string with_commas(uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string frame_location(const Frame& f) {
    if (!f.file.empty()) {
        size_t slash = f.file.rfind('/');
        std::string base = slash == std::string::npos ? f.file : f.file.substr(slash + 1);
        return f.line ? base + ":" + std::to_string(f.line) : base;
    }
    if (!f.module.empty()) {
        size_t slash = f.module.rfind('/');
        return slash == std::string::npos ? f.module : f.module.substr(slash + 1);
    }
    return "??";
}

std::string frame_function(const Frame& f) {
    return f.function.empty() ? "??" : f.function;
}

std::string source_function(const std::string& function, bool python) {
    // A Python qualified name's dots are its classes and functions ("Model.forward").
    return python ? function : std::string(without_clone_suffix(function));
}

std::string source_function(const Frame& f) {
    return f.function.empty() ? "??" : source_function(f.function, f.python);
}

std::string without_parameters(const std::string& function) {
    std::string_view name = function;
    for (bool more = true; more;) {
        more = false;
        for (std::string_view qualifier : {" const", " volatile", " &&", " &", " noexcept"})
            if (name.ends_with(qualifier)) {
                name.remove_suffix(qualifier.size());
                more = true;
            }
    }
    if (name.empty() || name.back() != ')') return function;
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
        depth += name[i] == ')' ? 1 : name[i] == '(' ? -1 : 0;
        // "S::operator()" as DWARF names it: those parentheses are the name's.
        if (depth == 0)
            return i == 0 || name.substr(0, i).ends_with("operator")
                       ? function
                       : std::string(name.substr(0, i));
    }
    return function;
}

std::string display_function(const Frame& f) {
    return f.python || f.function.empty() ? source_function(f)
                                          : without_parameters(source_function(f));
}

} // namespace gpuleak::analyzer
