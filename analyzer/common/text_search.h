// Case-insensitive search in names (function names, file paths) for the hints and the caching
// allocators' frames.
#pragma once

#include <string_view>

namespace gpuleak::analyzer {

// `needle`, written in lower case, occurs in `text` in any case.
bool contains_lowercase(std::string_view text, std::string_view needle);

} // namespace gpuleak::analyzer
