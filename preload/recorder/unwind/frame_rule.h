// Where one frame's caller's registers are, at one instruction of x86-64 code: what a backtrace
// needs of the compiler's unwind tables (.eh_frame), packed in 8 bytes so a thread can cache one
// per return address. Only the CFA (the caller's stack pointer) and rbp are tracked, and the
// return address must sit just below the CFA, as every x86-64 call leaves it; code whose frame is
// described any other way is Unsupported and left to libunwind.
#pragma once

#include <cstdint>

namespace gpuleak::unwind {

struct FrameRule {
    // How the CFA is computed from this frame's registers, or why there is no caller.
    enum class Cfa : uint8_t {
        Unsupported = 0, // no tables cover it, an expression, another register, a signal
                         // frame: ask libunwind
        SpPlus,          // rsp + cfa_offset
        BpPlus,          // rbp + cfa_offset
        DerefBpPlus,     // *(rbp + cfa_offset): a function that realigned its stack
        EndOfStack,      // the return address is undefined (_start, clone): the outermost frame
    };
    // Where the caller's rbp is.
    enum class Bp : uint8_t {
        Same = 0,  // still in rbp
        AtCfaPlus, // saved at CFA + bp_offset
        AtBpPlus,  // saved at rbp + bp_offset (with DerefBpPlus)
    };
    // The walk's fast path reads these bits only; any other rule has kSlow.
    static constexpr uint8_t kFromBp = 1;  // SpPlus without it, BpPlus with it
    static constexpr uint8_t kBpAtCfa = 2; // Bp::AtCfaPlus
    static constexpr uint8_t kSlow = 4;    // DerefBpPlus, EndOfStack, Unsupported or AtBpPlus

    int32_t cfa_offset = 0;
    int16_t bp_offset = 0;
    uint8_t flags = kSlow;
    uint8_t kinds = 0; // Cfa in the low nibble, Bp in the high one

    Cfa cfa() const { return static_cast<Cfa>(kinds & 0xF); }
    Bp bp() const { return static_cast<Bp>(kinds >> 4); }
    void set(Cfa c, Bp b) {
        kinds = static_cast<uint8_t>(static_cast<uint8_t>(c) | static_cast<uint8_t>(b) << 4);
        const bool fast = (c == Cfa::SpPlus || c == Cfa::BpPlus) && b != Bp::AtBpPlus;
        flags = fast ? static_cast<uint8_t>((c == Cfa::BpPlus ? kFromBp : 0) |
                                            (b == Bp::AtCfaPlus ? kBpAtCfa : 0))
                     : kSlow;
    }
    static FrameRule of(Cfa c) {
        FrameRule r;
        r.set(c, Bp::Same);
        return r;
    }
};
static_assert(sizeof(FrameRule) == 8);

} // namespace gpuleak::unwind
