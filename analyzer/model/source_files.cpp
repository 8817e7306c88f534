#include "model/source_files.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace gpuleak::analyzer {
namespace {

constexpr uintmax_t kMaxSourceBytes = 8u << 20;

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

int indentation(const std::string& s) {
    int n = 0;
    for (char c : s) {
        if (c == ' ')
            ++n;
        else if (c == '\t')
            n = (n / 8 + 1) * 8;
        else
            break;
    }
    return n;
}

bool starts_with_word(const std::string& s, const char* word) {
    size_t n = std::char_traits<char>::length(word);
    return s.compare(0, n, word) == 0 &&
           (s.size() == n || !(std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_'));
}

// A comprehension or generator expression on the line: "[f(x) for x in xs]".
bool has_comprehension(const std::string& s) {
    size_t f = s.find(" for ");
    return f != std::string::npos && s.find(" in ", f) != std::string::npos &&
           s.find_first_of("[({") < f;
}

// Comments, string and character literals become blanks (newlines kept), so braces, parentheses
// and keywords are only the code's own.
std::string blank_comments_and_literals(const std::string& text) {
    std::string out = text;
    for (size_t i = 0; i < out.size(); ++i) {
        auto blank_until = [&](size_t end) {
            for (; i < end && i < out.size(); ++i)
                if (out[i] != '\n') out[i] = ' ';
            --i;
        };
        if (text.compare(i, 2, "//") == 0) {
            blank_until(text.find('\n', i) == std::string::npos ? text.size() : text.find('\n', i));
        } else if (text.compare(i, 2, "/*") == 0) {
            size_t end = text.find("*/", i + 2);
            blank_until(end == std::string::npos ? text.size() : end + 2);
        } else if (text[i] == '"' || text[i] == '\'') {
            char quote = text[i];
            size_t j = i + 1;
            while (j < text.size() && text[j] != quote && text[j] != '\n')
                j += text[j] == '\\' ? 2 : 1;
            blank_until(std::min(j + 1, text.size()));
        }
    }
    return out;
}

// The position of a for/while/do keyword in code[from, to), or npos.
size_t loop_keyword(const std::string& code, size_t from, size_t to) {
    for (const char* word : {"for", "while", "do"}) {
        size_t n = std::char_traits<char>::length(word);
        for (size_t p = code.find(word, from); p != std::string::npos && p + n <= to;
             p = code.find(word, p + 1)) {
            auto ident = [&](size_t k) {
                return std::isalnum(static_cast<unsigned char>(code[k])) || code[k] == '_';
            };
            if ((p == 0 || !ident(p - 1)) && (p + n >= code.size() || !ident(p + n))) return p;
        }
    }
    return std::string::npos;
}

// Where the statement that contains offset `pos` begins: after the last ';', '{' or '}' before it
// outside parentheses (a for header's semicolons are inside them).
size_t statement_start(const std::string& code, size_t pos) {
    int parens = 0;
    for (size_t i = pos; i-- > 0;) {
        char c = code[i];
        if (c == ')')
            ++parens;
        else if (c == '(')
            parens = std::max(0, parens - 1);
        else if (parens == 0 && (c == ';' || c == '{' || c == '}'))
            return i + 1;
    }
    return 0;
}

} // namespace

SourceFiles& source_files() {
    static SourceFiles files;
    return files;
}

SourceFiles::File& SourceFiles::load(const std::string& path) {
    File& f = files_[path];
    if (f.read) return f;
    f.read = true;
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    if (ec || size > kMaxSourceBytes) return f;
    std::ifstream in(path);
    std::string text, all;
    while (std::getline(in, text)) {
        f.raw.push_back(text);
        f.trimmed.push_back(trim(text));
        all += text;
        all += '\n';
    }
    return f;
}

const std::string& SourceFiles::nth(const std::string& file, int line,
                                    std::vector<std::string> File::*lines) {
    static const std::string none;
    if (file.empty() || line <= 0) return none;
    const std::vector<std::string>& all = load(file).*lines;
    return static_cast<size_t>(line) <= all.size() ? all[line - 1] : none;
}

const std::string& SourceFiles::line(const std::string& file, int line) {
    return nth(file, line, &File::trimmed);
}

const std::string& SourceFiles::raw_line(const std::string& file, int line) {
    return nth(file, line, &File::raw);
}

namespace {

LoopStatement from_chain(std::vector<int> chain) {
    LoopStatement s;
    s.context = chain.empty() ? LoopContext::NotInLoop : LoopContext::InLoop;
    s.line = chain.empty() ? 0 : chain.front();
    s.chain = std::move(chain);
    return s;
}

} // namespace

LoopStatement SourceFiles::python_loop(const File& f, int line) const {
    std::vector<int> chain;
    if (has_comprehension(f.trimmed[line - 1])) chain.push_back(line);
    int threshold = indentation(f.raw[line - 1]);
    for (int j = line - 1; j >= 1; --j) {
        const std::string& t = f.trimmed[j - 1];
        if (t.empty() || t[0] == '#') continue;
        int indent = indentation(f.raw[j - 1]);
        if (indent >= threshold) continue;
        threshold = indent;
        if (starts_with_word(t, "for") || starts_with_word(t, "while") ||
            t.rfind("async for ", 0) == 0)
            chain.push_back(j);
        if (starts_with_word(t, "def") || starts_with_word(t, "class") ||
            t.rfind("async def ", 0) == 0)
            break;
    }
    return from_chain(std::move(chain));
}

LoopStatement SourceFiles::c_loop(File& f, int line) {
    if (f.code.empty()) {
        std::string all;
        for (const std::string& l : f.raw) {
            f.line_start.push_back(all.size());
            all += l;
            all += '\n';
        }
        f.line_start.push_back(all.size());
        f.code = blank_comments_and_literals(all);
    }
    const std::string& code = f.code;
    auto line_of = [&](size_t offset) {
        return static_cast<int>(std::upper_bound(f.line_start.begin(), f.line_start.end(), offset) -
                                f.line_start.begin());
    };
    std::vector<int> chain;
    auto add = [&](size_t at) {
        int l = line_of(at);
        if (chain.empty() || chain.back() != l) chain.push_back(l);
    };
    size_t begin = f.line_start[line - 1], end = f.line_start[line];
    // A loop header on the line itself ("for (auto& a : acts) a = make();"), or the statement the
    // line belongs to starting with one (an unbraced loop body).
    size_t at = loop_keyword(code, begin, end);
    if (at != std::string::npos) add(at);
    size_t start = statement_start(code, begin);
    at = loop_keyword(code, start, begin);
    if (at != std::string::npos) add(at);
    size_t first = code.find_first_not_of(" \t\r\n", start);
    // Then each enclosing block, outwards: a loop if the statement opening it has a loop keyword.
    int depth = 0;
    for (size_t i = start; i-- > 0;) {
        if (code[i] == '}') {
            ++depth;
        } else if (code[i] == '{') {
            if (depth > 0) {
                --depth;
                continue;
            }
            size_t head = statement_start(code, i);
            at = loop_keyword(code, head, i);
            if (at != std::string::npos) add(at);
            i = head;
        }
    }
    LoopStatement s = from_chain(std::move(chain));
    s.statement = first < begin ? line_of(first) : line;
    return s;
}

LoopStatement SourceFiles::enclosing_loop(const std::string& file, int line, bool python) {
    if (file.empty() || line <= 0) return {};
    File& f = load(file);
    if (static_cast<size_t>(line) > f.raw.size()) return {};
    auto [it, fresh] = f.loops.try_emplace(line);
    if (fresh) it->second = python ? python_loop(f, line) : c_loop(f, line);
    return it->second;
}

} // namespace gpuleak::analyzer
