#include "tail_calls.h"

#include <dwarf.h>

namespace gpuleak::analyzer {

namespace {

bool is_tail_call(Dwarf_Die& site) {
    Dwarf_Attribute attr;
    bool flag = false;
    return (dwarf_attr(&site, DW_AT_call_tail_call, &attr) != nullptr ||
            dwarf_attr(&site, DW_AT_GNU_tail_call, &attr) != nullptr) &&
           dwarf_formflag(&attr, &flag) == 0 && flag;
}

void collect(Dwarf_Die& parent, std::vector<Dwarf_Die>& out, int depth) {
    Dwarf_Die child;
    // Call sites nest in lexical blocks and inlined bodies a few levels deep; the bound only
    // guards against cycles in broken DWARF.
    if (depth > 64 || dwarf_child(&parent, &child) != 0) return;
    do {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
            Dwarf_Attribute attr;
            Dwarf_Die callee;
            if (is_tail_call(child) &&
                (dwarf_attr(&child, DW_AT_call_origin, &attr) != nullptr ||
                 dwarf_attr(&child, DW_AT_abstract_origin, &attr) != nullptr) &&
                dwarf_formref_die(&attr, &callee) != nullptr)
                out.push_back(callee);
        } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) {
            collect(child, out, depth + 1);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

} // namespace

std::vector<Dwarf_Die> tail_call_targets(Dwarf_Die function) {
    std::vector<Dwarf_Die> out;
    collect(function, out, 0);
    return out;
}

} // namespace gpuleak::analyzer
