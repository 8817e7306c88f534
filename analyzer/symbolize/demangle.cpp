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

} // namespace gpuleak::analyzer
