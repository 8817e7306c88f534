#include "recorder/unwind/cfa_program.h"

#include "recorder/unwind/dwarf_cursor.h"

namespace gpuleak::unwind {
namespace {

RegRule offset_rule(int64_t offset) {
    return RegRule{RegRule::AtCfa, offset};
}

} // namespace

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

} // namespace gpuleak::unwind
