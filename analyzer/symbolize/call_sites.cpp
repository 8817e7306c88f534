#include "call_sites.h"

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

// The function a call site calls by name; false for a call through a pointer.
bool origin(Dwarf_Die& site, Dwarf_Die& callee) {
    Dwarf_Attribute attr;
    return (dwarf_attr(&site, DW_AT_call_origin, &attr) != nullptr ||
            dwarf_attr(&site, DW_AT_abstract_origin, &attr) != nullptr) &&
           dwarf_formref_die(&attr, &callee) != nullptr;
}

// Calls `visit(site)` for every call site of `parent`, until it returns true.
template <typename Visit> bool each_call_site(Dwarf_Die& parent, Visit&& visit, int depth = 0) {
    Dwarf_Die child;
    // Call sites nest in lexical blocks and inlined bodies a few levels deep; the bound only
    // guards against cycles in broken DWARF.
    if (depth > 64 || dwarf_child(&parent, &child) != 0) return false;
    do {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
            if (visit(child)) return true;
        } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) {
            if (each_call_site(child, visit, depth + 1)) return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

} // namespace

std::vector<Dwarf_Die> tail_call_targets(Dwarf_Die function) {
    std::vector<Dwarf_Die> out;
    each_call_site(function, [&](Dwarf_Die& site) {
        Dwarf_Die callee;
        if (is_tail_call(site) && origin(site, callee)) out.push_back(callee);
        return false;
    });
    return out;
}

bool direct_callee(Dwarf_Die function, Dwarf_Addr return_pc, Dwarf_Die& callee) {
    bool found = false;
    each_call_site(function, [&](Dwarf_Die& site) {
        Dwarf_Attribute attr;
        Dwarf_Addr pc = 0;
        // DWARF 5 names the return address; GNU's call sites give it as their low_pc.
        if ((dwarf_attr(&site, DW_AT_call_return_pc, &attr) == nullptr &&
             dwarf_attr(&site, DW_AT_low_pc, &attr) == nullptr) ||
            dwarf_formaddr(&attr, &pc) != 0 || pc != return_pc)
            return false;
        found = !is_tail_call(site) && origin(site, callee);
        return true;
    });
    return found;
}

} // namespace gpuleak::analyzer
