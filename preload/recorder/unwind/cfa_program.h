// The call frame instructions of a CIE and an FDE (DWARF 5, 6.4), run up to one address: the row
// of the CFA table there, as far as a backtrace on x86-64 cares (the CFA, the return address, rbp).
#pragma once

#include <cstdint>

#include "recorder/unwind/dwarf_cursor.h"
#include "recorder/unwind/eh_frame.h"

namespace gpuleak::unwind {

// DWARF register numbers of x86-64 (System V psABI, figure 3.36).
inline constexpr uint64_t kRegRbp = 6;
inline constexpr uint64_t kRegRsp = 7;
inline constexpr uint64_t kRegRa = 16;

// A register's rule, as far as a backtrace cares.
struct RegRule {
    enum Kind : uint8_t { Same, AtCfa, AtBp, Undefined, Unsupported } kind = Same;
    int64_t offset = 0;
};

// One row of the table: how the CFA is found and where the two registers are.
struct Row {
    enum CfaKind : uint8_t { Sp, Bp, DerefBp, Other } cfa = Sp;
    int64_t cfa_offset = 0;
    RegRule bp;
    RegRule ra;
};

// What a CIE says about the FDEs that refer to it.
struct Cie {
    uint64_t code_align = 1;
    int64_t data_align = 1;
    uint64_t ra_register = kRegRa;
    uint8_t fde_encoding = kPeAbsPtr;
    bool has_augmentation_data = false;
    bool signal_frame = false;
    uint64_t instructions = 0, instructions_end = 0;
};

// Reads the CIE at `at`; false if it is malformed or uses what this reader does not know.
bool read_cie(uint64_t at, Span readable, Cie& cie);

// Runs call frame instructions [begin, end) on `row` while `loc` (advanced by them) stays at or
// below `pc`. `initial` is the row after the CIE's instructions (for DW_CFA_restore). False on a
// malformed or unknown instruction.
bool run(const Cie& cie, uint64_t begin, uint64_t end, uint64_t& loc, uint64_t pc, Row& row,
         const Row& initial);

} // namespace gpuleak::unwind
