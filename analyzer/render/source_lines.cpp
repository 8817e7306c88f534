#include "render/source_lines.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

namespace gpuleak::analyzer {

const std::string& source_line(const std::string& file, int line) {
    static const std::string none;
    static std::map<std::string, std::vector<std::string>> cache;
    if (file.empty() || line <= 0) return none;
    auto [it, fresh] = cache.try_emplace(file);
    if (fresh) {
        std::error_code ec;
        auto size = std::filesystem::file_size(file, ec);
        std::ifstream in(file);
        std::string text;
        if (!ec && size <= (8u << 20))
            while (std::getline(in, text)) {
                size_t a = text.find_first_not_of(" \t"), b = text.find_last_not_of(" \t\r");
                it->second.push_back(a == std::string::npos ? "" : text.substr(a, b - a + 1));
            }
    }
    return static_cast<size_t>(line) <= it->second.size() ? it->second[line - 1] : none;
}

} // namespace gpuleak::analyzer
