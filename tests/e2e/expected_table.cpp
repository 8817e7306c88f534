#include "expected_table.h"

#include <fstream>
#include <regex>
#include <sstream>

namespace gpuleak::e2e {
namespace {

std::string trim(std::string s) {
    size_t a = s.find_first_not_of(" \t`*");
    size_t b = s.find_last_not_of(" \t`*");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool plain_number(const std::string& s, uint64_t& out) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoull(s);
    return true;
}

std::vector<std::string> cells(const std::string& row) {
    std::vector<std::string> out;
    std::stringstream ss(row);
    std::string cell;
    std::getline(ss, cell, '|'); // before the first bar
    while (std::getline(ss, cell, '|'))
        out.push_back(trim(cell));
    if (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

} // namespace

std::map<std::string, ExpectedProgram> load_expected(const std::string& path) {
    std::map<std::string, ExpectedProgram> result;
    std::ifstream in(path);
    std::string line;
    std::vector<std::string> titles;
    ExpectedProgram current;
    bool valid = false;
    auto flush = [&] {
        if (valid && !current.sites.empty())
            for (const auto& t : titles)
                result[t] = current;
        current = {};
        titles.clear();
        valid = false;
    };
    const std::regex bold(R"((\w+) \*\*(\d+)\*\*)");
    while (std::getline(in, line)) {
        if (line.rfind("### ", 0) == 0) {
            flush();
            std::string title = line.substr(4);
            std::stringstream names(title);
            std::string name;
            while (std::getline(names, name, ','))
                titles.push_back(trim(name));
            valid = true;
        } else if (line.rfind("## ", 0) == 0) {
            flush();
        } else if (!titles.empty() && line.rfind("summary:", 0) == 0) {
            for (std::sregex_iterator it(line.begin(), line.end(), bold), end; it != end; ++it)
                current.summary[(*it)[1]] = std::stoull((*it)[2]);
            if (current.summary.size() < 6) valid = false; // formulas instead of numbers
        } else if (!titles.empty() && line.rfind("peak composition:", 0) == 0) {
            std::stringstream parts(line.substr(std::string("peak composition:").size()));
            std::string part;
            while (std::getline(parts, part, ',')) {
                part = trim(part);
                size_t space = part.rfind(' ');
                uint64_t bytes;
                if (space == std::string::npos || !plain_number(part.substr(space + 1), bytes)) {
                    valid = false;
                    continue;
                }
                current.peak_by_function[part.substr(0, space)] = bytes;
            }
        } else if (!titles.empty() && line.rfind("| `", 0) == 0) {
            auto c = cells(line);
            ExpectedSite s;
            if (c.size() != 8) {
                valid = false; // e.g. an extra device column: asserted by its own test
                continue;
            }
            s.function = c[0];
            s.api = c[1];
            s.kind = c[2];
            if (!plain_number(c[3], s.allocations) || !plain_number(c[4], s.bytes_allocated) ||
                !plain_number(c[5], s.live_count_end) || !plain_number(c[6], s.live_bytes_end) ||
                !plain_number(c[7], s.peak_live_bytes)) {
                valid = false;
                continue;
            }
            current.sites.push_back(s);
        }
    }
    flush();
    return result;
}

} // namespace gpuleak::e2e
