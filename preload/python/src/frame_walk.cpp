#include "frame_walk.h"

#include <cstddef>
#include <cstring>

#include "version_tables.h"

namespace gpuleak::python {
namespace {

// Frames visited (3.9/3.10) or skipped (3.11+: shims, hidden frames) before a corrupted or cyclic
// chain is given up.
constexpr size_t kMaxVisited = 4 * kMaxFrames;

// What the walk reads of a code object for each of its frames. Within one walk a code address
// cannot change hands (every frame on the walked stack holds a reference to its code), so a frame
// running the code of the frame inside it (recursion) reuses these.
struct CodeFacts {
    uintptr_t code = 0;
    uintptr_t bytecode = 0; // where its instructions start (3.14t: the shared copy's)
    // Instruction offsets d within the code satisfy d + 2 < offset_span (unsigned): -2 (not
    // started) up to the code's size in bytes. 0 where the size read is no size.
    uint64_t offset_span = 0;
    int64_t traceable_from = 0; // byte offset; 0 where the layout has none
};

CodeFacts code_facts(const Layout& l, uintptr_t code) {
    CodeFacts facts{code, code + l.co_code_adaptive};
    auto units = load<int64_t>(code, l.var_size);
    if (units >= 0 && units < (int64_t{1} << 60))
        facts.offset_span = 2 * static_cast<uint64_t>(units) + 2;
    if (l.co_firsttraceable != kAbsent)
        facts.traceable_from =
            2 * int64_t{load<int32_t>(code, static_cast<uint32_t>(l.co_firsttraceable))};
    return facts;
}

size_t walk_frame_objects(const Layout& l, uintptr_t code_type, uintptr_t tstate, PyFrame* out,
                          size_t max) {
    uintptr_t frame = load<uintptr_t>(tstate, l.ts_top);
    size_t n = 0;
    CodeFacts last; // the previous code object met (code 0: none yet)
    for (size_t visited = 0; plausible(frame) && n < max && visited < kMaxVisited; ++visited) {
        uintptr_t code = load<uintptr_t>(frame, l.f_code);
        if ((code == last.code && code != 0) || has_type(l, code, code_type)) {
            if (code != last.code) last = CodeFacts{code};
            int32_t lasti = load<int32_t>(frame, l.f_lasti);
            int32_t offset = lasti < 0 ? -1 : (l.lasti_in_units ? 2 * lasti : lasti);
            // Up to 3.10 every Python frame is evaluated by its own _PyEval_EvalFrameDefault call.
            out[n++] = PyFrame{code, offset, true, {}};
        }
        uintptr_t back = load<uintptr_t>(frame, l.f_back);
        if (back == frame) break;
        frame = back;
    }
    return n;
}

// Byte offset of the current instruction from the start of the bytecode the frame executes, as
// CPython's _PyInterpreterFrame_LASTI computes it (times two). False if it lies outside the code.
bool instruction_offset(const Layout& l, uintptr_t frame, const CodeFacts& code, int32_t& offset) {
    uintptr_t base = code.bytecode;
    if (l.f_tlbc_index != kAbsent) {
        // Free-threaded 3.14: each thread may run its own copy of the bytecode.
        uintptr_t tlbc = load<uintptr_t>(code.code, static_cast<uint32_t>(l.co_tlbc));
        int32_t index = load<int32_t>(frame, static_cast<uint32_t>(l.f_tlbc_index));
        if (!plausible(tlbc) || index < 0 || index >= load<int64_t>(tlbc, 0)) return false;
        base = load<uintptr_t>(tlbc, 8 + 8 * static_cast<uint32_t>(index));
    }
    uintptr_t delta = load<uintptr_t>(frame, l.f_instr) - base;
    // -2: 3.11/3.12 prev_instr before the first instruction (frame not started).
    if (delta + 2 >= code.offset_span) return false;
    offset = static_cast<int32_t>(delta);
    return true;
}

// CPython's _PyFrame_IsIncomplete: a frame still running its prologue (before RESUME) is hidden
// from tracebacks, e.g. 3.13's _Py_InitCleanup shim under a specialized __init__ call.
bool incomplete(const Layout& l, uint8_t owner, const CodeFacts& code, int32_t offset) {
    if (l.co_firsttraceable == kAbsent || owner == l.owner_generator) return false;
    return offset < code.traceable_from;
}

// Three stores, where building the aggregate takes five (zeroing, then each field). The entry
// flag goes in as 4 bytes, so that the reserved bytes after it are zeroed with it.
void put_frame(PyFrame* out, uintptr_t code, int32_t offset, bool entry) {
    static_assert(std::endian::native == std::endian::little && sizeof(PyFrame) == 16 &&
                  offsetof(PyFrame, byte_offset) == 8 && offsetof(PyFrame, is_entry) == 12);
    const uint32_t entry_and_reserved = entry ? 1 : 0;
    std::memcpy(&out->code_id, &code, sizeof code);
    std::memcpy(&out->byte_offset, &offset, sizeof offset);
    std::memcpy(&out->is_entry, &entry_and_reserved, sizeof entry_and_reserved);
}

// Inlined into each caller below: called with one of the constant tables, every offset and
// "absent" test folds into the instructions, which leaves the loads of the frames themselves.
[[gnu::always_inline]] inline size_t walk_interpreter_frames(const Layout& l, uintptr_t code_type,
                                                             uintptr_t tstate, PyFrame* out,
                                                             size_t max) {
    if (max == 0) return 0;
    uintptr_t frame = load<uintptr_t>(tstate, l.ts_top);
    if (l.cframe_current != kAbsent) {
        // 3.11/3.12: the _PyCFrame lives on the C stack of the eval loop that is blocked in the
        // call that reached us, so it is stable for the duration of the walk.
        frame =
            plausible(frame) ? load<uintptr_t>(frame, static_cast<uint32_t>(l.cframe_current)) : 0;
    }
    size_t n = 0;
    size_t skipped = 0; // shims, hidden frames and frames without code: bounded on their own
    CodeFacts last;     // the previous code object met (code 0: none yet)
    // A cycle in a corrupted chain ends when `max` frames were kept or kMaxVisited skipped: each
    // count is tested where it grows, so that a kept frame costs no test of the other.
    while (plausible(frame)) {
        uintptr_t previous = load<uintptr_t>(frame, l.f_back);
        uint8_t owner = load<uint8_t>(frame, static_cast<uint32_t>(l.f_owner));
        bool kept = false;
        if (owner >= l.owner_shim_min) {
            // 3.12+: every eval-loop call pushes one shim below its frames, so the frame just
            // inside it is where that call entered.
            if (n) out[n - 1].is_entry = true;
        } else {
            uintptr_t code = load<uintptr_t>(frame, l.f_code) & l.code_mask;
            bool known_code = code == last.code && code != 0;
            if (!known_code && has_type(l, code, code_type)) {
                last = code_facts(l, code);
                known_code = true;
            }
            if (known_code) {
                bool entry = l.f_is_entry != kAbsent &&
                             load<uint8_t>(frame, static_cast<uint32_t>(l.f_is_entry)) != 0;
                int32_t offset = -1;
                bool known = instruction_offset(l, frame, last, offset);
                if (known && incomplete(l, owner, last, offset)) {
                    // Hidden, but its eval-loop boundary still belongs to the frames inside it.
                    if (entry && n) out[n - 1].is_entry = true;
                } else {
                    put_frame(&out[n++], code, offset, entry);
                    if (n == max) break;
                    kept = true;
                }
            }
        }
        if (!kept && ++skipped == kMaxVisited) break;
        if (previous == frame) break;
        frame = previous;
    }
    return n;
}

constexpr Layout table(uint32_t version_hex) {
    Layout l;
    table_layout(version_hex, l);
    return l;
}
constexpr Layout kTable311 = table(0x030b00f0);
constexpr Layout kTable312 = table(0x030c00f0);

[[gnu::noinline]] size_t walk_table_311(uintptr_t code_type, uintptr_t tstate, PyFrame* out,
                                        size_t max) {
    return walk_interpreter_frames(kTable311, code_type, tstate, out, max);
}
[[gnu::noinline]] size_t walk_table_312(uintptr_t code_type, uintptr_t tstate, PyFrame* out,
                                        size_t max) {
    return walk_interpreter_frames(kTable312, code_type, tstate, out, max);
}
[[gnu::noinline]] size_t walk_any_layout(const Layout& l, uintptr_t code_type, uintptr_t tstate,
                                         PyFrame* out, size_t max) {
    return walk_interpreter_frames(l, code_type, tstate, out, max);
}

} // namespace

size_t walk_frames(const Layout& l, uintptr_t code_type, uintptr_t tstate, PyFrame* out,
                   size_t max) {
    if (l.kind == FrameKind::FrameObject) return walk_frame_objects(l, code_type, tstate, out, max);
    // The tables' fields are the same for every patch release (version_tables.h).
    if (l.table_minor == 11) return walk_table_311(code_type, tstate, out, max);
    if (l.table_minor == 12) return walk_table_312(code_type, tstate, out, max);
    return walk_any_layout(l, code_type, tstate, out, max);
}

} // namespace gpuleak::python
