// The traced program's source text, read once per file (offline, on the machine that analyzes the
// trace; absent files are simply unknown). It quotes a site's line and tells loop detection whether
// a line sits inside a loop statement, which a stack alone cannot say: a function that allocates
// at the same positions again was either called again by a loop around the call, or loops itself.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpuleak::analyzer {

enum class LoopContext { InLoop, NotInLoop, Unknown };

struct LoopStatement {
    LoopContext context = LoopContext::Unknown;
    int line = 0;           // the innermost `for` / `while` line when InLoop
    std::vector<int> chain; // every enclosing loop statement's line, innermost first
    // C and C++: the line the statement holding the position begins on (a call on a
    // continuation line belongs to the statement above). Statements run in the order of these
    // lines, which optimized code need not keep in its addresses. 0: not known (Python).
    int statement = 0;
};

class SourceFiles {
public:
    // The line without surrounding blanks; "" when unknown.
    const std::string& line(const std::string& file, int line);
    // The line as in the file, where columns count; "" when unknown.
    const std::string& raw_line(const std::string& file, int line);
    // Whether `line` is inside a for/while/do loop (or a comprehension) of the code around it,
    // and which loops enclose it: Python by indentation up to the enclosing def; C and C++ by the
    // enclosing blocks and statements, comments and literals ignored.
    LoopStatement enclosing_loop(const std::string& file, int line, bool python);

private:
    struct File {
        bool read = false;
        std::vector<std::string> raw;     // as in the file
        std::vector<std::string> trimmed; // blanks removed at both ends
        std::string code;                 // C-like text with comments and literals blanked
        std::vector<size_t> line_start;   // offsets of lines in `code`
        std::map<int, LoopStatement> loops;
    };
    File& load(const std::string& file);
    // Line `line` (from 1) of one of a file's line vectors; "" when unknown.
    const std::string& nth(const std::string& file, int line,
                           std::vector<std::string> File::*lines);
    LoopStatement python_loop(const File& f, int line) const;
    LoopStatement c_loop(File& f, int line);

    std::map<std::string, File> files_;
};

// One cache for the whole analysis.
SourceFiles& source_files();

} // namespace gpuleak::analyzer
