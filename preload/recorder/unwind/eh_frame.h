// The frame rule at one address, read from a loaded module's .eh_frame_hdr search table and the
// .eh_frame entries it points to (the DWARF call frame instructions of the function holding the
// address, run up to it). Never trusts the tables: every read is checked against the memory the
// module maps there, and anything malformed or beyond what FrameRule describes is Unsupported.
#pragma once

#include <cstdint>

#include "recorder/unwind/frame_rule.h"

namespace gpuleak::unwind {

// A range of readable memory: the module's segment that holds its unwind tables.
struct Span {
    uint64_t begin = 0;
    uint64_t end = 0;
};

// `pc` lies inside the instruction whose rule is wanted: for a return address, pass the address
// minus one (the call's last byte: a call that ends a function returns past its end).
FrameRule rule_from_eh_frame_hdr(uint64_t eh_frame_hdr, Span readable, uint64_t pc);

} // namespace gpuleak::unwind
