// cat("a", b, "c"): strings joined by appending. GCC 12 warns (-Wrestrict, a false positive, GCC
// bug 105329) on some "literal" + std::string temporaries; appending sidesteps it.
#pragma once

#include <string>
#include <string_view>

namespace gpuleak::analyzer {

template <typename... Parts> std::string cat(const Parts&... parts) {
    std::string out;
    (out.append(std::string_view(parts)), ...);
    return out;
}

} // namespace gpuleak::analyzer
