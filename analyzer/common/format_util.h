#pragma once

#include <cstdint>
#include <string>

#include "model/site_table.h"

namespace gpuleak::analyzer {

std::string human_bytes(uint64_t bytes);    // "1.5 GiB", "512 B"
std::string with_commas(uint64_t n);        // "1,234,567"
std::string frame_location(const Frame& f); // "file.cpp:42" (basename), or the module, or "??"
std::string frame_function(const Frame& f); // the function, or "??"

} // namespace gpuleak::analyzer
