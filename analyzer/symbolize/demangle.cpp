#include "demangle.h"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace gpuleak::analyzer {

std::string demangle(const char* name) {
    if (name == nullptr) return {};
    if (name[0] != '_' || name[1] != 'Z') return name;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
    return status == 0 && out ? std::string(out.get()) : std::string(name);
}

std::string_view without_clone_suffix(std::string_view function) {
    size_t clone = function.find(" [clone .");
    if (clone != std::string_view::npos) return function.substr(0, clone);
    // A C identifier has no dot; a C++ name's dots are inside its parameter list or template
    // arguments, after a parenthesis or angle bracket.
    size_t dot = function.find('.');
    if (dot != std::string_view::npos && dot > 0 && function.find_first_of("(<") > dot)
        return function.substr(0, dot);
    return function;
}

} // namespace gpuleak::analyzer
