#include "recorder/unwind/eh_frame.h"

#include <cstring>

#include "recorder/unwind/cfa_program.h"
#include "recorder/unwind/dwarf_cursor.h"

namespace gpuleak::unwind {
namespace {

// The search table encoding every linker writes: 4-byte signed offsets from the header.
constexpr uint8_t kTableEncoding = kPeDatarel | kPeSdata4;

// The return address is where every x86-64 call leaves it: just below the CFA.
constexpr int64_t kReturnAddressOffset = -8;

// Packs a row into a FrameRule, or says why it cannot be one.
FrameRule pack(const Row& row) {
    const FrameRule unsupported = FrameRule::of(FrameRule::Cfa::Unsupported);
    if (row.ra.kind == RegRule::Undefined) return FrameRule::of(FrameRule::Cfa::EndOfStack);
    if (row.ra.kind != RegRule::AtCfa || row.ra.offset != kReturnAddressOffset) return unsupported;
    FrameRule::Cfa cfa;
    switch (row.cfa) {
    case Row::Sp:
        cfa = FrameRule::Cfa::SpPlus;
        break;
    case Row::Bp:
        cfa = FrameRule::Cfa::BpPlus;
        break;
    case Row::DerefBp:
        cfa = FrameRule::Cfa::DerefBpPlus;
        break;
    default:
        return unsupported;
    }
    FrameRule::Bp bp;
    switch (row.bp.kind) {
    case RegRule::Same:
        bp = FrameRule::Bp::Same;
        break;
    case RegRule::AtCfa:
        bp = FrameRule::Bp::AtCfaPlus;
        break;
    case RegRule::AtBp:
        bp = FrameRule::Bp::AtBpPlus;
        break;
    default:
        return unsupported; // lost (undefined) or in another register
    }
    if (row.cfa_offset < INT32_MIN || row.cfa_offset > INT32_MAX || row.bp.offset < INT16_MIN ||
        row.bp.offset > INT16_MAX)
        return unsupported;
    FrameRule r;
    r.cfa_offset = static_cast<int32_t>(row.cfa_offset);
    r.bp_offset = static_cast<int16_t>(row.bp.offset);
    r.set(cfa, bp);
    return r;
}

// The FDE covering pc, by binary search of the header's table; 0 if none.
uint64_t find_fde(uint64_t hdr, Span readable, uint64_t pc) {
    Cursor c{hdr, readable.end};
    if (hdr < readable.begin) return 0;
    uint8_t version = c.fixed<uint8_t>();
    uint8_t frame_encoding = c.fixed<uint8_t>();
    uint8_t count_encoding = c.fixed<uint8_t>();
    uint8_t table_encoding = c.fixed<uint8_t>();
    if (!c.ok || version != 1 || table_encoding != kTableEncoding) return 0;
    c.pointer(frame_encoding, hdr);
    uint64_t count = c.pointer(count_encoding, hdr);
    const uint64_t table = c.pos;
    if (!c.ok || count == 0 || count > (readable.end - table) / 8) return 0;
    auto entry = [&](uint64_t i, int32_t& initial, int32_t& fde) {
        std::memcpy(&initial, reinterpret_cast<const void*>(table + i * 8), 4);
        std::memcpy(&fde, reinterpret_cast<const void*>(table + i * 8 + 4), 4);
    };
    // The last entry whose initial location is at or below pc.
    uint64_t lo = 0, hi = count;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        int32_t initial, fde;
        entry(mid, initial, fde);
        if (hdr + static_cast<int64_t>(initial) <= pc)
            lo = mid;
        else
            hi = mid;
    }
    int32_t initial, fde;
    entry(lo, initial, fde);
    if (hdr + static_cast<int64_t>(initial) > pc) return 0;
    return hdr + static_cast<int64_t>(fde);
}

} // namespace

FrameRule rule_from_eh_frame_hdr(uint64_t eh_frame_hdr, Span readable, uint64_t pc) {
    const FrameRule unsupported = FrameRule::of(FrameRule::Cfa::Unsupported);
    uint64_t fde = find_fde(eh_frame_hdr, readable, pc);
    if (!fde || fde < readable.begin) return unsupported;
    Cursor c{fde, readable.end};
    uint64_t length = c.fixed<uint32_t>();
    if (!c.ok || length == 0xFFFFFFFF || length < 8) return unsupported;
    const uint64_t end = c.pos + length;
    if (end > readable.end) return unsupported;
    c.end = end;
    const uint64_t cie_field = c.pos;
    uint32_t cie_offset = c.fixed<uint32_t>();
    if (!c.ok || cie_offset == 0 || cie_offset > cie_field) return unsupported;
    Cie cie;
    if (!read_cie(cie_field - cie_offset, readable, cie) || cie.signal_frame) return unsupported;
    uint64_t begin = c.pointer(cie.fde_encoding);
    uint64_t range = c.pointer(cie.fde_encoding & kPeFormat);
    if (!c.ok) return unsupported;
    // Not covered: a gap between functions (the table's previous entry ends before pc).
    if (pc < begin || pc - begin >= range) return unsupported;
    if (cie.has_augmentation_data) c.skip(c.uleb());
    if (!c.ok) return unsupported;

    // The CIE's instructions make the initial row (for every pc of the function); then the FDE's.
    Row row;
    row.ra = RegRule{RegRule::Unsupported, 0};
    uint64_t loc = begin;
    Row none;
    if (!run(cie, cie.instructions, cie.instructions_end, loc, UINT64_MAX, row, none))
        return unsupported;
    const Row initial = row;
    loc = begin;
    if (!run(cie, c.pos, end, loc, pc, row, initial)) return unsupported;
    return pack(row);
}

} // namespace gpuleak::unwind
