#pragma once

#include <string>

namespace gpuleak::analyzer {

// Anything that is not an Itanium C++ mangled name (C symbols, odd clones) comes back unchanged,
// so a frame always shows something. nullptr gives "".
std::string demangle(const char* name);

} // namespace gpuleak::analyzer
