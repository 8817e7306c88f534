#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpuleak::analyzer {

// Finds the function DIEs covering a pc: the out-of-line DW_TAG_subprogram first, then every
// DW_TAG_inlined_subroutine nested in it down to the innermost.
//
// dwarf_getscopes would do, but it walks the CU's DIEs for every pc, and heavily inlined C++
// subprograms have thousands of them while a trace has tens of thousands of pcs. So each CU's
// subprogram ranges are indexed once, and each subprogram's inlining tree is built once, on first
// use; a lookup is then a binary search per nesting level.
class ScopeChain {
public:
    // `pc` is a DWARF address (the module's bias already removed). Empty if no function covers it.
    std::vector<Dwarf_Die> find(Dwarf_Die cu, Dwarf_Addr pc);

private:
    struct Span {
        Dwarf_Addr low;
        Dwarf_Addr high;
        uint32_t node;
        Dwarf_Addr reach = 0; // highest `high` of this span and all sorted before it
    };
    // A subprogram or inlined subroutine and the inlined calls directly inside it.
    struct Node {
        Dwarf_Die die;
        bool expanded = false;
        std::vector<Span> inlined; // sorted by low
    };
    struct Unit {
        std::vector<Span> subprograms; // sorted by low
        std::vector<Node> nodes;
    };

    Unit& unit_of(Dwarf_Die& cu);
    static void expand(Unit& unit, uint32_t node);
    static void collect_inlined(Unit& unit, Dwarf_Die& die, std::vector<Span>& out);

    std::unordered_map<Dwarf_Off, Unit> units_; // by CU DIE offset
};

} // namespace gpuleak::analyzer
