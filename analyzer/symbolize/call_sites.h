// What a function's DWARF call sites (DW_TAG_call_site, or GNU's before DWARF 5) say about its
// calls: which of them are tail calls, and which function a call returning to an address calls.
// GCC writes call sites from -O1 on; at -O0 there are none, and both answers are empty.
#pragma once

#include <elfutils/libdw.h>

#include <vector>

namespace gpuleak::analyzer {

// The functions `function` (a subprogram DIE) ends in with a tail call: a call compiled as a jump
// (GCC's -foptimize-sibling-calls, on from -O2), after which the caller's frame is gone from every
// stack under the callee. Inlined bodies included; a callee known only by address (an indirect
// call) is left out.
std::vector<Dwarf_Die> tail_call_targets(Dwarf_Die function);

// The function that `function`'s call returning to `return_pc` (a DWARF address) calls, if that
// call is direct: false for an indirect call, a tail call, or no call site there.
bool direct_callee(Dwarf_Die function, Dwarf_Addr return_pc, Dwarf_Die& callee);

} // namespace gpuleak::analyzer
