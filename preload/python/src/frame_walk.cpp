#include "frame_walk.h"

#include "version_tables.h"

namespace gpuleak::python {
namespace {

// Shims and skipped frames count too; a corrupted or cyclic chain ends here.
constexpr size_t kMaxVisited = 4 * kMaxFrames;

bool plausible(uintptr_t p) {
    return p >= 4096 && (p & 7) == 0;
}

bool is_code(const Layout& l, uintptr_t code_type, uintptr_t code) {
    return plausible(code) && load<uintptr_t>(code, l.ob_type) == code_type;
}

size_t walk_frame_objects(const Layout& l, uintptr_t code_type, uintptr_t tstate, PyFrame* out,
                          size_t max) {
    uintptr_t frame = load<uintptr_t>(tstate, l.ts_top);
    size_t n = 0;
    for (size_t visited = 0; plausible(frame) && n < max && visited < kMaxVisited; ++visited) {
        uintptr_t code = load<uintptr_t>(frame, l.f_code);
        if (is_code(l, code_type, code)) {
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
bool instruction_offset(const Layout& l, uintptr_t frame, uintptr_t code, int32_t& offset) {
    uintptr_t base = code + l.co_code_adaptive;
    if (l.f_tlbc_index != kAbsent) {
        // Free-threaded 3.14: each thread may run its own copy of the bytecode.
        uintptr_t tlbc = load<uintptr_t>(code, static_cast<uint32_t>(l.co_tlbc));
        int32_t index = load<int32_t>(frame, static_cast<uint32_t>(l.f_tlbc_index));
        if (!plausible(tlbc) || index < 0 || index >= load<int64_t>(tlbc, 0)) return false;
        base = load<uintptr_t>(tlbc, 8 + 8 * static_cast<uint32_t>(index));
    }
    auto delta = static_cast<intptr_t>(load<uintptr_t>(frame, l.f_instr) - base);
    int64_t code_bytes = 2 * load<int64_t>(code, l.var_size);
    // -2: 3.11/3.12 prev_instr before the first instruction (frame not started).
    if (delta < -2 || delta >= code_bytes) return false;
    offset = static_cast<int32_t>(delta);
    return true;
}

// CPython's _PyFrame_IsIncomplete: a frame still running its prologue (before RESUME) is hidden
// from tracebacks, e.g. 3.13's _Py_InitCleanup shim under a specialized __init__ call.
bool incomplete(const Layout& l, uint8_t owner, uintptr_t code, int32_t offset) {
    if (l.co_firsttraceable == kAbsent || owner == l.owner_generator) return false;
    int32_t first = load<int32_t>(code, static_cast<uint32_t>(l.co_firsttraceable));
    return offset < 2 * first;
}

// Inlined into each caller below: called with one of the constant tables, every offset and
// "absent" test folds into the instructions, which leaves the loads of the frames themselves.
[[gnu::always_inline]] inline size_t walk_interpreter_frames(const Layout& l, uintptr_t code_type,
                                                             uintptr_t tstate, PyFrame* out,
                                                             size_t max) {
    uintptr_t frame = load<uintptr_t>(tstate, l.ts_top);
    if (l.cframe_current != kAbsent) {
        // 3.11/3.12: the _PyCFrame lives on the C stack of the eval loop that is blocked in the
        // call that reached us, so it is stable for the duration of the walk.
        frame =
            plausible(frame) ? load<uintptr_t>(frame, static_cast<uint32_t>(l.cframe_current)) : 0;
    }
    size_t n = 0;
    for (size_t visited = 0; plausible(frame) && n < max && visited < kMaxVisited; ++visited) {
        uintptr_t previous = load<uintptr_t>(frame, l.f_back);
        uint8_t owner = load<uint8_t>(frame, static_cast<uint32_t>(l.f_owner));
        if (owner >= l.owner_shim_min) {
            // 3.12+: every eval-loop call pushes one shim below its frames, so the frame just
            // inside it is where that call entered.
            if (n) out[n - 1].is_entry = true;
        } else {
            uintptr_t code = load<uintptr_t>(frame, l.f_code) & l.code_mask;
            if (is_code(l, code_type, code)) {
                bool entry = l.f_is_entry != kAbsent &&
                             load<uint8_t>(frame, static_cast<uint32_t>(l.f_is_entry)) != 0;
                int32_t offset = -1;
                bool known = instruction_offset(l, frame, code, offset);
                if (known && incomplete(l, owner, code, offset)) {
                    // Hidden, but its eval-loop boundary still belongs to the frames inside it.
                    if (entry && n) out[n - 1].is_entry = true;
                } else {
                    out[n++] = PyFrame{code, offset, entry, {}};
                }
            }
        }
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
