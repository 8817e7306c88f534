#pragma once

#include <elfutils/libdw.h>

#include <vector>

namespace gpuleak::analyzer {

// The functions `function` (a subprogram DIE) ends in with a tail call: a call compiled as a jump
// (GCC's -foptimize-sibling-calls, on from -O2), after which the caller's frame is gone from every
// stack under the callee. Read from its DWARF call sites (DW_TAG_call_site with
// DW_AT_call_tail_call, or GNU's before DWARF 5), inlined bodies included; a callee known only by
// address (an indirect call) is left out. Empty where the compiler wrote no call sites (-O0).
std::vector<Dwarf_Die> tail_call_targets(Dwarf_Die function);

} // namespace gpuleak::analyzer
