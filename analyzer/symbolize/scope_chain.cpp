#include "scope_chain.h"

#include <dwarf.h>

#include <algorithm>

namespace gpuleak::analyzer {

namespace {

// Lexical scopes inside a function: no frame of their own, but inlined calls sit inside them.
bool is_block(int tag) {
    return tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block ||
           tag == DW_TAG_with_stmt;
}

// No pc ranges of their own, but member functions and functions in namespaces live under them.
bool holds_functions(int tag) {
    switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_module:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
        return true;
    default:
        return false;
    }
}

template <typename Visit> void for_each_child(Dwarf_Die& die, Visit visit) {
    Dwarf_Die child;
    if (dwarf_child(&die, &child) != 0) return;
    do {
        if (!visit(child)) return;
        Dwarf_Die next;
        if (dwarf_siblingof(&child, &next) != 0) return;
        child = next;
    } while (true);
}

// GCC emits empty ranges (low == high) for inlined calls whose code was optimised away; they
// cover nothing and would only shadow real ranges in the sorted lookups.
template <typename AddRange> void for_each_range(Dwarf_Die& die, AddRange add) {
    Dwarf_Addr base = 0, low = 0, high = 0;
    ptrdiff_t offset = 0;
    while ((offset = dwarf_ranges(&die, offset, &base, &low, &high)) > 0)
        if (low < high) add(low, high);
}

template <typename Span> void sort_for_lookup(std::vector<Span>& spans) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.low < b.low; });
    Dwarf_Addr reach = 0;
    for (Span& span : spans)
        span.reach = reach = std::max(reach, span.high);
}

// Sibling ranges do not overlap in well-formed DWARF, so the last span starting at or below pc is
// the only candidate; `reach` still finds a match hidden by a malformed overlap.
template <typename Span> const Span* locate(const std::vector<Span>& spans, Dwarf_Addr pc) {
    auto it = std::upper_bound(spans.begin(), spans.end(), pc,
                               [](Dwarf_Addr a, const Span& s) { return a < s.low; });
    while (it != spans.begin()) {
        --it;
        if (it->reach <= pc) return nullptr;
        if (pc < it->high) return &*it;
    }
    return nullptr;
}

template <typename Span>
void collect_subprograms(Dwarf_Die& die, std::vector<Span>& out, uint32_t& next_node,
                         std::vector<Dwarf_Die>& dies) {
    for_each_child(die, [&](Dwarf_Die& child) {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            bool any = false;
            for_each_range(child, [&](Dwarf_Addr low, Dwarf_Addr high) {
                out.push_back(Span{low, high, next_node, 0});
                any = true;
            });
            if (any) {
                dies.push_back(child);
                ++next_node;
            }
        } else if (holds_functions(tag)) {
            collect_subprograms(child, out, next_node, dies);
        }
        return true;
    });
}

} // namespace

ScopeChain::Unit& ScopeChain::unit_of(Dwarf_Die& cu) {
    auto [it, inserted] = units_.try_emplace(dwarf_dieoffset(&cu));
    Unit& unit = it->second;
    if (inserted) {
        uint32_t next_node = 0;
        std::vector<Dwarf_Die> dies;
        collect_subprograms(cu, unit.subprograms, next_node, dies);
        sort_for_lookup(unit.subprograms);
        unit.nodes.reserve(dies.size());
        for (const Dwarf_Die& die : dies)
            unit.nodes.push_back(Node{die, false, {}});
    }
    return unit;
}

void ScopeChain::collect_inlined(Unit& unit, Dwarf_Die& die, std::vector<Span>& out) {
    for_each_child(die, [&](Dwarf_Die& child) {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_inlined_subroutine) {
            const auto index = static_cast<uint32_t>(unit.nodes.size());
            unit.nodes.push_back(Node{child, false, {}});
            expand(unit, index);
            for_each_range(child, [&](Dwarf_Addr low, Dwarf_Addr high) {
                out.push_back(Span{low, high, index, 0});
            });
        } else if (is_block(tag)) {
            collect_inlined(unit, child, out);
        }
        return true;
    });
}

void ScopeChain::expand(Unit& unit, uint32_t node) {
    // nodes grows while collecting, so work on copies rather than references into it.
    Dwarf_Die die = unit.nodes[node].die;
    std::vector<Span> inlined;
    collect_inlined(unit, die, inlined);
    sort_for_lookup(inlined);
    unit.nodes[node].inlined = std::move(inlined);
    unit.nodes[node].expanded = true;
}

std::vector<Dwarf_Die> ScopeChain::find(Dwarf_Die cu, Dwarf_Addr pc) {
    std::vector<Dwarf_Die> chain;
    Unit& unit = unit_of(cu);
    // A miss is padding, code without DWARF, or a GNU C nested function (its DIE sits inside its
    // parent's, where the index does not look); the symbol table still names those.
    const Span* span = locate(unit.subprograms, pc);
    if (span == nullptr) return chain;
    uint32_t node = span->node;
    while (true) {
        chain.push_back(unit.nodes[node].die);
        if (!unit.nodes[node].expanded) expand(unit, node);
        span = locate(unit.nodes[node].inlined, pc);
        if (span == nullptr) return chain;
        node = span->node;
    }
}

} // namespace gpuleak::analyzer
