#include "recorder/unwind/eh_frame.h"

#include <cstring>

namespace gpuleak::unwind {
namespace {

// DWARF register numbers of x86-64 (System V psABI, figure 3.36).
constexpr uint64_t kRegRbp = 6;
constexpr uint64_t kRegRsp = 7;
constexpr uint64_t kRegRa = 16;

// Pointer encodings (DW_EH_PE_*).
constexpr uint8_t kPeOmit = 0xFF;
constexpr uint8_t kPeFormat = 0x0F;
constexpr uint8_t kPeApplication = 0x70;
constexpr uint8_t kPeIndirect = 0x80;
constexpr uint8_t kPeAbsPtr = 0x00, kPeUleb = 0x01, kPeUdata2 = 0x02, kPeUdata4 = 0x03,
                  kPeUdata8 = 0x04, kPeSleb = 0x09, kPeSdata2 = 0x0A, kPeSdata4 = 0x0B,
                  kPeSdata8 = 0x0C;
constexpr uint8_t kPeAbs = 0x00, kPePcrel = 0x10, kPeDatarel = 0x30;
// The search table encoding every linker writes: 4-byte signed offsets from the header.
constexpr uint8_t kTableEncoding = kPeDatarel | kPeSdata4;

// A cursor over checked memory: a read past the end sets `ok` false and returns 0.
struct Cursor {
    uint64_t pos;
    uint64_t end;
    bool ok = true;

    template <typename T> T fixed() {
        if (!ok || pos > end || end - pos < sizeof(T)) return fail<T>();
        T v;
        std::memcpy(&v, reinterpret_cast<const void*>(pos), sizeof v);
        pos += sizeof v;
        return v;
    }
    uint64_t uleb() {
        uint64_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            uint8_t b = fixed<uint8_t>();
            if (!ok || shift > 63) return fail<uint64_t>();
            v |= static_cast<uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
    }
    int64_t sleb() {
        uint64_t v = 0;
        unsigned shift = 0;
        uint8_t b;
        do {
            b = fixed<uint8_t>();
            if (!ok || shift > 63) return fail<int64_t>();
            v |= static_cast<uint64_t>(b & 0x7F) << shift;
            shift += 7;
        } while (b & 0x80);
        if (shift < 64 && (b & 0x40)) v |= ~0ull << shift;
        return static_cast<int64_t>(v);
    }
    // An encoded pointer. `data_base` serves datarel (the search table's header).
    uint64_t pointer(uint8_t encoding, uint64_t data_base = 0) {
        if (encoding == kPeOmit) return fail<uint64_t>();
        const uint64_t field = pos;
        uint64_t v = 0;
        switch (encoding & kPeFormat) {
        case kPeAbsPtr:
            v = fixed<uint64_t>();
            break;
        case kPeUleb:
            v = uleb();
            break;
        case kPeUdata2:
            v = fixed<uint16_t>();
            break;
        case kPeUdata4:
            v = fixed<uint32_t>();
            break;
        case kPeUdata8:
            v = fixed<uint64_t>();
            break;
        case kPeSleb:
            v = static_cast<uint64_t>(sleb());
            break;
        case kPeSdata2:
            v = static_cast<uint64_t>(static_cast<int64_t>(fixed<int16_t>()));
            break;
        case kPeSdata4:
            v = static_cast<uint64_t>(static_cast<int64_t>(fixed<int32_t>()));
            break;
        case kPeSdata8:
            v = fixed<uint64_t>();
            break;
        default:
            return fail<uint64_t>();
        }
        switch (encoding & kPeApplication) {
        case kPeAbs:
            break;
        case kPePcrel:
            v += field;
            break;
        case kPeDatarel:
            v += data_base;
            break;
        default:
            return fail<uint64_t>(); // textrel, funcrel, aligned: not in x86-64 tables
        }
        return v; // where kPeIndirect is set, the address of the value (personality routines)
    }
    void skip(uint64_t n) {
        if (!ok || pos > end || end - pos < n)
            ok = false;
        else
            pos += n;
    }
    template <typename T> T fail() {
        ok = false;
        return T{};
    }
};

// A register's rule, as far as a backtrace cares.
struct RegRule {
    enum Kind : uint8_t { Same, AtCfa, AtBp, Undefined, Unsupported } kind = Same;
    int64_t offset = 0;
};

struct Row {
    enum CfaKind : uint8_t { Sp, Bp, DerefBp, Other } cfa = Sp;
    int64_t cfa_offset = 0;
    RegRule bp;
    RegRule ra;
};

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
bool read_cie(uint64_t at, Span readable, Cie& cie) {
    Cursor c{at, readable.end};
    if (at < readable.begin) return false;
    uint64_t length = c.fixed<uint32_t>();
    if (length == 0xFFFFFFFF) return false; // 64-bit DWARF: never in .eh_frame of x86-64
    const uint64_t end = c.pos + length;
    if (!c.ok || end > readable.end || length < 4) return false;
    c.end = end;
    if (c.fixed<uint32_t>() != 0) return false; // not a CIE
    uint8_t version = c.fixed<uint8_t>();
    if (version != 1 && version != 3) return false;
    char augmentation[8];
    size_t n = 0;
    for (char ch; (ch = static_cast<char>(c.fixed<uint8_t>())) != 0 && c.ok;) {
        if (n + 1 >= sizeof augmentation) return false;
        augmentation[n++] = ch;
    }
    augmentation[n] = 0;
    cie.code_align = c.uleb();
    cie.data_align = c.sleb();
    cie.ra_register = version == 1 ? c.fixed<uint8_t>() : c.uleb();
    if (!c.ok) return false;
    const char* a = augmentation;
    if (*a == 'z') {
        cie.has_augmentation_data = true;
        uint64_t data_length = c.uleb();
        const uint64_t data_end = c.pos + data_length;
        for (++a; *a && c.ok; ++a) {
            switch (*a) {
            case 'R':
                cie.fde_encoding = c.fixed<uint8_t>();
                break;
            case 'L':
                c.fixed<uint8_t>();
                break;
            case 'P':
                c.pointer(c.fixed<uint8_t>());
                break;
            case 'S':
                cie.signal_frame = true;
                break;
            default:
                return false; // unknown: cannot know what follows
            }
        }
        if (!c.ok || c.pos > data_end) return false;
        c.pos = data_end;
    } else if (*a) {
        return false; // "eh" and other pre-'z' augmentations
    }
    if (c.pos > end) return false;
    cie.instructions = c.pos;
    cie.instructions_end = end;
    return true;
}

RegRule offset_rule(int64_t offset) {
    return RegRule{RegRule::AtCfa, offset};
}

// Runs call frame instructions [begin, end) on `row` while `loc` (advanced by them) stays at or
// below `pc`. `initial` is the row after the CIE's instructions (for DW_CFA_restore). False on a
// malformed or unknown instruction.
bool run(const Cie& cie, uint64_t begin, uint64_t end, uint64_t& loc, uint64_t pc, Row& row,
         const Row& initial) {
    Cursor c{begin, end};
    constexpr int kMaxRemembered = 8;
    Row remembered[kMaxRemembered];
    int depth = 0;
    auto set_reg = [&](uint64_t reg, RegRule rule) {
        if (reg == kRegRbp)
            row.bp = rule;
        else if (reg == cie.ra_register)
            row.ra = rule;
    };
    auto restore_reg = [&](uint64_t reg) {
        if (reg == kRegRbp)
            row.bp = initial.bp;
        else if (reg == cie.ra_register)
            row.ra = initial.ra;
    };
    auto def_cfa = [&](uint64_t reg, int64_t offset) {
        row.cfa = reg == kRegRsp ? Row::Sp : reg == kRegRbp ? Row::Bp : Row::Other;
        row.cfa_offset = offset;
    };
    auto advance = [&](uint64_t delta) { // false once the rows pass pc
        loc += delta * cie.code_align;
        return loc <= pc;
    };
    while (c.ok && c.pos < c.end) {
        uint8_t op = c.fixed<uint8_t>();
        uint8_t low = op & 0x3F;
        switch (op >> 6) {
        case 1:
            if (!advance(low)) return true;
            continue;
        case 2:
            set_reg(low, offset_rule(static_cast<int64_t>(c.uleb()) * cie.data_align));
            continue;
        case 3:
            restore_reg(low);
            continue;
        default:
            break;
        }
        switch (op) {
        case 0x00:
            break;   // nop
        case 0x01: { // set_loc
            uint64_t to = c.pointer(cie.fde_encoding);
            if (!c.ok || to < loc) return false;
            loc = to;
            if (loc > pc) return true;
            break;
        }
        case 0x02:
            if (!advance(c.fixed<uint8_t>())) return c.ok;
            break;
        case 0x03:
            if (!advance(c.fixed<uint16_t>())) return c.ok;
            break;
        case 0x04:
            if (!advance(c.fixed<uint32_t>())) return c.ok;
            break;
        case 0x05: { // offset_extended
            uint64_t reg = c.uleb();
            set_reg(reg, offset_rule(static_cast<int64_t>(c.uleb()) * cie.data_align));
            break;
        }
        case 0x06:
            restore_reg(c.uleb());
            break;
        case 0x07:
            set_reg(c.uleb(), RegRule{RegRule::Undefined, 0});
            break;
        case 0x08:
            set_reg(c.uleb(), RegRule{RegRule::Same, 0});
            break;
        case 0x09: { // register: the value lives in another register
            uint64_t reg = c.uleb();
            c.uleb();
            set_reg(reg, RegRule{RegRule::Unsupported, 0});
            break;
        }
        case 0x0A:
            if (depth == kMaxRemembered) return false;
            remembered[depth++] = row;
            break;
        case 0x0B:
            // The whole row, the CFA included: GCC's epilogues rely on it, as libgcc and
            // libunwind do.
            if (depth == 0) return false;
            row = remembered[--depth];
            break;
        case 0x0C: { // def_cfa
            uint64_t reg = c.uleb();
            def_cfa(reg, static_cast<int64_t>(c.uleb()));
            break;
        }
        case 0x0D: { // def_cfa_register
            uint64_t reg = c.uleb();
            if (row.cfa == Row::DerefBp) row.cfa_offset = 0; // an expression had no offset
            def_cfa(reg, row.cfa_offset);
            break;
        }
        case 0x0E:
            row.cfa_offset = static_cast<int64_t>(c.uleb());
            break;
        case 0x0F: { // def_cfa_expression: only "DW_OP_breg6 N; DW_OP_deref" (realigned stack)
            uint64_t length = c.uleb();
            Cursor e{c.pos, c.pos + length};
            c.skip(length);
            uint8_t breg = e.fixed<uint8_t>();
            int64_t offset = e.sleb();
            uint8_t deref = e.fixed<uint8_t>();
            if (e.ok && e.pos == e.end && breg == 0x70 + kRegRbp && deref == 0x06) {
                row.cfa = Row::DerefBp;
                row.cfa_offset = offset;
            } else {
                row.cfa = Row::Other;
            }
            break;
        }
        case 0x10: { // expression: only rbp as "DW_OP_breg6 N" (saved at rbp + N)
            uint64_t reg = c.uleb();
            uint64_t length = c.uleb();
            Cursor e{c.pos, c.pos + length};
            c.skip(length);
            uint8_t breg = e.fixed<uint8_t>();
            int64_t offset = e.sleb();
            if (reg == kRegRbp && e.ok && e.pos == e.end && breg == 0x70 + kRegRbp)
                set_reg(reg, RegRule{RegRule::AtBp, offset});
            else
                set_reg(reg, RegRule{RegRule::Unsupported, 0});
            break;
        }
        case 0x11: { // offset_extended_sf
            uint64_t reg = c.uleb();
            set_reg(reg, offset_rule(c.sleb() * cie.data_align));
            break;
        }
        case 0x12: { // def_cfa_sf
            uint64_t reg = c.uleb();
            def_cfa(reg, c.sleb() * cie.data_align);
            break;
        }
        case 0x13:
            row.cfa_offset = c.sleb() * cie.data_align;
            break;   // def_cfa_offset_sf
        case 0x14:   // val_offset
        case 0x15: { // val_offset_sf
            uint64_t reg = c.uleb();
            if (op == 0x14)
                c.uleb();
            else
                c.sleb();
            set_reg(reg, RegRule{RegRule::Unsupported, 0});
            break;
        }
        case 0x16: { // val_expression
            uint64_t reg = c.uleb();
            c.skip(c.uleb());
            set_reg(reg, RegRule{RegRule::Unsupported, 0});
            break;
        }
        case 0x2E:
            c.uleb();
            break;   // GNU_args_size
        case 0x2F: { // GNU_negative_offset_extended
            uint64_t reg = c.uleb();
            set_reg(reg, offset_rule(-static_cast<int64_t>(c.uleb()) * cie.data_align));
            break;
        }
        default:
            return false;
        }
    }
    return c.ok;
}

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
