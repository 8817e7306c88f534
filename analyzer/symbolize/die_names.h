#pragma once

#include <elfutils/libdw.h>

#include <string>
#include <unordered_map>

namespace gpuleak::analyzer {

// Function names and call sites read from DWARF, for frames the symbol table cannot name: inlined
// functions have no symbol of their own.
class DieNames {
public:
    // Demangled and qualified like a symbol name ("ns::Class::f(int)") when the DIE carries a
    // linkage name; otherwise its plain name prefixed with the enclosing namespaces and classes.
    const std::string& function_name(Dwarf_Die die);

private:
    // Keyed by the DIE's position in the mapped debug data, which, unlike its offset, stays unique
    // when dwz has moved shared DIEs into a supplementary file.
    std::unordered_map<const void*, std::string> cache_;
};

// Where an inlined subroutine was called from, i.e. the location in the next outer frame.
// False when DW_AT_call_file/DW_AT_call_line are missing; `column` is 0 without DW_AT_call_column.
bool call_site(Dwarf_Die inlined, std::string& file, int& line, int& column);

} // namespace gpuleak::analyzer
