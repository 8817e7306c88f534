#pragma once

#include <string>
#include <string_view>

namespace gpuleak::analyzer {

// Anything that is not an Itanium C++ mangled name (C symbols, odd clones) comes back unchanged,
// so a frame always shows something. nullptr gives "".
std::string demangle(const char* name);

// The function a clone was made from, as DWARF names it: GCC names the clones it makes of f (its
// arguments' constants propagated, a part split off, a cold path) `f.constprop.0` in C and, once
// demangled, `f(int) [clone .constprop.0]` in C++.
std::string_view without_clone_suffix(std::string_view function);

} // namespace gpuleak::analyzer
