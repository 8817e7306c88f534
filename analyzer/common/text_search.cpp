#include "common/text_search.h"

#include <algorithm>
#include <cctype>

namespace gpuleak::analyzer {

bool contains_lowercase(std::string_view text, std::string_view needle) {
    return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == b;
           }) != text.end();
}

} // namespace gpuleak::analyzer
