// The grammars of settings, shared by the preload (GPULEAK_* environment variables) and
// gpuleak-report (gate options), so a value means the same everywhere. No allocation, no locale:
// the preload parses inside someone else's process.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuleak::common {

// 1/0, true/false, yes/no, on/off, in any case, with surrounding spaces. nullopt otherwise.
std::optional<bool> parse_bool(std::string_view text);

// A byte count: a number (decimals allowed: 1.5G) and an optional unit, in any case, with optional
// spaces between: none or B (bytes), K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB. Every unit is binary
// (1K = 1KB = 1KiB = 1024). Fractions of a byte are dropped. nullopt when malformed or above
// 2^64 - 1.
std::optional<uint64_t> parse_size(std::string_view text);
inline constexpr const char* kSizeExamples = "4096, 64K, 512MiB, 1.5G or 1GB";

// Decimal digits only (with surrounding spaces). nullopt when malformed or above 2^64 - 1.
std::optional<uint64_t> parse_unsigned(std::string_view text);

} // namespace gpuleak::common
