#include "die_names.h"

#include "demangle.h"

#include <dwarf.h>

#include <cstdlib>
#include <cstring>

namespace gpuleak::analyzer {

namespace {

// Integrated lookups follow DW_AT_abstract_origin and DW_AT_specification, which is where an
// inlined or out-of-class definition keeps its name.
const char* linkage_name(Dwarf_Die& die) {
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_linkage_name, &attr) != nullptr ||
        dwarf_attr_integrate(&die, DW_AT_MIPS_linkage_name, &attr) != nullptr)
        return dwarf_formstring(&attr);
    return nullptr;
}

// Concrete and out-of-class DIEs sit in the CU or in another function; only the declaration's
// parents are the namespaces and classes that qualify the name.
Dwarf_Die declaration_of(Dwarf_Die die) {
    // Real chains are one or two hops; the bound only guards against cycles in broken DWARF.
    for (int hop = 0; hop < 8; ++hop) {
        Dwarf_Attribute attr;
        Dwarf_Die next;
        if ((dwarf_attr(&die, DW_AT_abstract_origin, &attr) == nullptr &&
             dwarf_attr(&die, DW_AT_specification, &attr) == nullptr) ||
            dwarf_formref_die(&attr, &next) == nullptr)
            break;
        die = next;
    }
    return die;
}

// A lambda's closure type has no name; GCC names its constructors "<lambda>".
bool is_closure(Dwarf_Die type) {
    Dwarf_Die child;
    if (dwarf_child(&type, &child) != 0) return false;
    do {
        const char* name = dwarf_diename(&child);
        if (dwarf_tag(&child) == DW_TAG_subprogram && name != nullptr &&
            std::strcmp(name, "<lambda>") == 0)
            return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

std::string scope_prefix(Dwarf_Die declaration) {
    Dwarf_Die* scopes = nullptr;
    const int n = dwarf_getscopes_die(&declaration, &scopes);
    std::string prefix;
    // scopes[0] is the declaration itself and the last one its CU; walk outermost first. A
    // function is a scope of the classes defined in it (a lambda's closure): named as in
    // demangled symbols, "main::{lambda}::operator()".
    for (int i = n - 1; i >= 1; --i) {
        const int tag = dwarf_tag(&scopes[i]);
        Dwarf_Attribute attr;
        const char* name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr));
        if (tag == DW_TAG_subprogram) {
            if (name == nullptr) continue;
            // Its own declaration knows its class and namespaces (a definition sits in the CU).
            prefix = scope_prefix(declaration_of(scopes[i])) + name;
        } else if (tag == DW_TAG_namespace) {
            prefix += name != nullptr ? name : "(anonymous namespace)";
        } else if (tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                   tag == DW_TAG_union_type) {
            prefix += name != nullptr ? name : is_closure(scopes[i]) ? "{lambda}" : "(anonymous)";
        } else {
            continue;
        }
        prefix += "::";
    }
    std::free(scopes);
    return prefix;
}

} // namespace

const std::string& DieNames::function_name(Dwarf_Die die) {
    // Every inlined copy of a function points at the same abstract origin, so that is the key.
    Dwarf_Attribute attr;
    Dwarf_Die origin;
    if (dwarf_attr(&die, DW_AT_abstract_origin, &attr) != nullptr &&
        dwarf_formref_die(&attr, &origin) != nullptr)
        die = origin;
    auto [it, inserted] = cache_.try_emplace(die.addr);
    if (!inserted) return it->second;
    if (const char* linkage = linkage_name(die)) {
        it->second = demangle(linkage);
    } else if (const char* name = dwarf_diename(&die)) {
        it->second = scope_prefix(declaration_of(die)) + name;
    }
    return it->second;
}

bool call_site(Dwarf_Die inlined, std::string& file, int& line, int& column) {
    file.clear();
    line = 0;
    column = 0;
    Dwarf_Attribute attr;
    Dwarf_Word value = 0;
    if (dwarf_attr(&inlined, DW_AT_call_line, &attr) != nullptr &&
        dwarf_formudata(&attr, &value) == 0)
        line = static_cast<int>(value);
    if (dwarf_attr(&inlined, DW_AT_call_column, &attr) != nullptr &&
        dwarf_formudata(&attr, &value) == 0)
        column = static_cast<int>(value);
    Dwarf_Die cu;
    Dwarf_Files* files = nullptr;
    size_t nfiles = 0;
    if (dwarf_attr(&inlined, DW_AT_call_file, &attr) != nullptr &&
        dwarf_formudata(&attr, &value) == 0 &&
        dwarf_diecu(&inlined, &cu, nullptr, nullptr) != nullptr &&
        dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && value < nfiles) {
        if (const char* name = dwarf_filesrc(files, value, nullptr, nullptr)) file = name;
    }
    return line != 0 || !file.empty();
}

} // namespace gpuleak::analyzer
