// Where the frame walk finds things in one CPython build (x86-64 offsets, in bytes).
// 3.9-3.12 come from hardcoded tables checked against offsetof() on the internal headers;
// 3.13+ come from the interpreter's own _Py_DebugOffsets, plus the few per-version facts those
// offsets do not carry (owner enum, stackref tag bits, unicode state bits, _co_firsttraceable).
#pragma once

#include <cstdint>

namespace gpuleak::python {

enum class FrameKind : uint8_t {
    FrameObject,      // 3.9/3.10: PyFrameObject chain, one per eval-loop call
    InterpreterFrame, // 3.11+: _PyInterpreterFrame chain, several per eval-loop call
};

inline constexpr int32_t kAbsent = -1;

struct Layout {
    uint32_t version_hex = 0;
    const char* source = "table";
    uint8_t table_minor = 0; // 11 for version_tables.h's 3.11 table, ...; 0: from _Py_DebugOffsets
    FrameKind kind = FrameKind::FrameObject;
    bool free_threaded = false;

    // PyThreadState / PyInterpreterState
    uint32_t ts_interp = 0;
    uint32_t interp_id = 0;
    uint32_t ts_top = 0;              // frame (3.9/3.10), cframe (3.11/3.12), current_frame (3.13+)
    int32_t cframe_current = kAbsent; // 3.11/3.12: ts_top is a _PyCFrame*, frame is at this offset

    // Frames
    uint32_t f_back = 0;
    uint32_t f_code = 0;
    uintptr_t code_mask = ~uintptr_t{0}; // 3.14 f_executable is a _PyStackRef with tag bits
    uint32_t f_lasti = 0;                // FrameObject only
    bool lasti_in_units = false;         // 3.10 counts f_lasti in 2-byte code units
    uint32_t f_instr = 0;                // InterpreterFrame: prev_instr (3.11/3.12) / instr_ptr
    int32_t f_is_entry = kAbsent;        // 3.11
    int32_t f_owner = kAbsent;           // 3.11+
    int32_t f_tlbc_index = kAbsent;      // 3.14 free-threaded: index into co_tlbc
    uint8_t owner_generator = 1;
    uint8_t owner_shim_min = 0xff; // 3.12+: owner >= this is a C-stack/interpreter shim

    // Objects
    uint32_t ob_type = 8;
    uint32_t var_size = 16; // PyVarObject.ob_size
    uint32_t type_basicsize = 32;
    uint32_t co_filename = 0;
    uint32_t co_qualname = 0; // co_name before 3.11, which has no co_qualname
    uint32_t co_linetable = 0;
    uint32_t co_firstlineno = 0;
    uint32_t co_code_adaptive = 0;       // 3.11+
    int32_t co_firsttraceable = kAbsent; // 3.11+ (int, code units)
    int32_t co_tlbc = kAbsent;           // 3.14 free-threaded
    int32_t co_version = kAbsent;        // 3.12+ (uint32): unique per code object
    uint32_t bytes_sval = 32;
    uint32_t str_length = 16;
    uint32_t str_state = 32;
    uint32_t str_ascii_size = 0;
    uint32_t str_compact_size = 0;
    uint8_t str_state_shift = 0; // 3.14t stores `interned` in a whole byte below kind/compact/ascii

    // Sanity checks run once at detection: PyCode_Type / PyFrame_Type tp_basicsize.
    uint32_t expect_code_basicsize = 0;
    uint32_t expect_frame_basicsize = 0; // 0: not checked
};

// 3.9-3.12: version_tables.h.

// Reads _Py_DebugOffsets at the start of _PyRuntime (3.13+). On failure returns false and points
// `why` at a short reason.
bool debug_offsets_layout(const void* runtime, uint32_t version_hex, Layout& out, const char** why);

} // namespace gpuleak::python
