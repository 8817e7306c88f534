// Hardcoded layouts for the versions without _Py_DebugOffsets. Every number was printed with
// offsetof() against the Py_BUILD_CORE headers of 3.9.18, 3.10.13, 3.11.7 and 3.12.1; CPython keeps
// these structs stable across patch releases (Debian's 3.11.2 matches the 3.11.7 table).
#pragma once

#include "layout.h"

namespace gpuleak::python {
namespace tables {

constexpr void frame_object_common(Layout& l) {
    l.kind = FrameKind::FrameObject;
    l.ts_interp = 16;
    l.interp_id = 24;
    l.ts_top = 24; // tstate->frame
    l.f_back = 24;
    l.f_code = 32;
    l.co_filename = 104;
    l.co_qualname = 112;  // co_name
    l.co_linetable = 120; // co_lnotab (3.9) / co_linetable (3.10)
    l.co_firstlineno = 40;
    l.str_ascii_size = 48;
    l.str_compact_size = 72;
    l.expect_code_basicsize = 176;
}

constexpr void interpreter_frame_common(Layout& l) {
    l.kind = FrameKind::InterpreterFrame;
    l.ts_interp = 16;
    l.ts_top = 56;  // tstate->cframe
    l.f_instr = 56; // prev_instr
    l.co_filename = 112;
    l.co_qualname = 128;
    l.co_linetable = 136;
}

} // namespace tables

// 3.9-3.12 release builds. False for any other version. constexpr, so that the frame walk can be
// compiled for a table with its offsets as constants (frame_walk.cpp).
constexpr bool table_layout(uint32_t version_hex, Layout& l) {
    l = Layout{};
    l.version_hex = version_hex;
    l.source = "table";
    l.table_minor = static_cast<uint8_t>((version_hex >> 16) & 0xff);
    switch ((version_hex >> 16) & 0xffff) {
    case 0x0309:
        tables::frame_object_common(l);
        l.f_lasti = 104;
        l.expect_frame_basicsize = 368;
        return true;
    case 0x030a:
        tables::frame_object_common(l);
        l.f_lasti = 96;
        l.lasti_in_units = true;
        l.expect_frame_basicsize = 360;
        return true;
    case 0x030b:
        tables::interpreter_frame_common(l);
        l.interp_id = 48;
        l.cframe_current = 8;
        l.f_code = 32;
        l.f_back = 48;
        l.f_is_entry = 68;
        l.f_owner = 69;
        l.co_firstlineno = 72;
        l.co_code_adaptive = 184;
        l.co_firsttraceable = 168;
        l.str_ascii_size = 48;
        l.str_compact_size = 72;
        l.expect_code_basicsize = 184;
        return true;
    case 0x030c:
        tables::interpreter_frame_common(l);
        l.interp_id = 8;
        l.cframe_current = 0;
        l.f_code = 0;
        l.f_back = 8;
        l.f_owner = 70;
        l.owner_shim_min = 3; // FRAME_OWNED_BY_CSTACK: the "<shim>" entry frame of each eval call
        l.co_firstlineno = 68;
        l.co_version = 92;
        l.co_code_adaptive = 192;
        l.co_firsttraceable = 176;
        l.str_ascii_size = 40;
        l.str_compact_size = 56;
        l.expect_code_basicsize = 192;
        return true;
    default:
        return false;
    }
}

} // namespace gpuleak::python
