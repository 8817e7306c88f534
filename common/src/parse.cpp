#include "gpuleak/common/parse.h"

namespace gpuleak::common {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return s;
}

bool equals_lower(std::string_view s, std::string_view lower_word) {
    if (s.size() != lower_word.size()) return false;
    for (size_t i = 0; i < s.size(); ++i)
        if (lower(s[i]) != lower_word[i]) return false;
    return true;
}

// Digits at the front of `s` into `out` (consumed); false on overflow.
bool take_digits(std::string_view& s, uint64_t& out, size_t& count) {
    out = 0;
    count = 0;
    while (!s.empty() && is_digit(s.front())) {
        uint64_t d = static_cast<uint64_t>(s.front() - '0');
        if (out > (UINT64_MAX - d) / 10) return false;
        out = out * 10 + d;
        s.remove_prefix(1);
        ++count;
    }
    return true;
}

} // namespace

std::optional<bool> parse_bool(std::string_view text) {
    text = trim(text);
    for (std::string_view yes : {"1", "true", "yes", "on"})
        if (equals_lower(text, yes)) return true;
    for (std::string_view no : {"0", "false", "no", "off"})
        if (equals_lower(text, no)) return false;
    return std::nullopt;
}

std::optional<uint64_t> parse_unsigned(std::string_view text) {
    text = trim(text);
    uint64_t value = 0;
    size_t digits = 0;
    if (!take_digits(text, value, digits) || digits == 0 || !text.empty()) return std::nullopt;
    return value;
}

std::optional<uint64_t> parse_size(std::string_view text) {
    text = trim(text);
    uint64_t whole = 0;
    size_t whole_digits = 0;
    if (!take_digits(text, whole, whole_digits)) return std::nullopt;
    // The fraction, exactly: up to 18 digits as numerator / 10^digits (more cannot matter).
    uint64_t fraction = 0, denominator = 1;
    size_t fraction_digits = 0;
    if (!text.empty() && text.front() == '.') {
        text.remove_prefix(1);
        while (!text.empty() && is_digit(text.front())) {
            if (fraction_digits < 18) {
                fraction = fraction * 10 + static_cast<uint64_t>(text.front() - '0');
                denominator *= 10;
            }
            ++fraction_digits;
            text.remove_prefix(1);
        }
        if (fraction_digits == 0) return std::nullopt; // "1." or "."
    }
    if (whole_digits == 0 && fraction_digits == 0) return std::nullopt;
    std::string_view unit = trim(text);
    unsigned shift = 0;
    if (unit.empty() || equals_lower(unit, "b"))
        shift = 0;
    else if (equals_lower(unit, "k") || equals_lower(unit, "kb") || equals_lower(unit, "kib"))
        shift = 10;
    else if (equals_lower(unit, "m") || equals_lower(unit, "mb") || equals_lower(unit, "mib"))
        shift = 20;
    else if (equals_lower(unit, "g") || equals_lower(unit, "gb") || equals_lower(unit, "gib"))
        shift = 30;
    else if (equals_lower(unit, "t") || equals_lower(unit, "tb") || equals_lower(unit, "tib"))
        shift = 40;
    else
        return std::nullopt;
    using u128 = unsigned __int128;
    u128 bytes = static_cast<u128>(whole) << shift;
    bytes += (static_cast<u128>(fraction) << shift) / denominator;
    if (bytes > UINT64_MAX) return std::nullopt;
    return static_cast<uint64_t>(bytes);
}

} // namespace gpuleak::common
