// Builds a Layout from the _Py_DebugOffsets struct that 3.13+ places at the start of _PyRuntime.
// The struct itself changes between minor versions, so where each field sits inside it is known
// per minor; its values then describe this particular build (free-threaded, debug...).
#include <cstring>

#include "layout.h"

namespace gpuleak::python {
namespace {

// Byte positions of the fields we use inside _Py_DebugOffsets (every field is a uint64_t).
// 3.13 from Include/internal/pycore_runtime.h; 3.14 from Include/internal/pycore_debug_offsets.h.
struct Schema {
    uint32_t interp_size, interp_id;
    uint32_t ts_size, ts_interp, ts_current_frame;
    uint32_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_owner, fr_tlbc_index;
    uint32_t co_size, co_filename, co_qualname, co_linetable, co_firstlineno, co_code_adaptive,
        co_tlbc;
    uint32_t obj_size, obj_type;
    uint32_t type_size, type_tp_name;
    uint32_t bytes_size, bytes_ob_size, bytes_sval;
    uint32_t str_size, str_state, str_length, str_ascii_size;
};

constexpr uint32_t kNone = 0;

constexpr Schema kSchema313 = {
    48,  56,                               // interpreter_state
    152, 176, 184,                         // thread_state
    224, 232, 240, 248, 264, kNone,        // interpreter_frame
    272, 280, 296, 304, 312, 344,   kNone, // code_object
    352, 360,                              // pyobject
    368, 376,                              // type_object
    512, 520, 528,                         // bytes_object
    536, 544, 552, 560,                    // unicode_object
};

constexpr Schema kSchema314 = {
    48,  56,                           // interpreter_state (threads_main, generations added)
    176, 200, 208,                     // thread_state
    248, 256, 264, 272, 288, 304,      // interpreter_frame (stackpointer, tlbc_index added)
    312, 320, 336, 344, 352, 384, 392, // code_object (co_tlbc added)
    400, 408,                          // pyobject (set_object inserted before it)
    416, 424,                          // type_object
    592, 600, 608,                     // bytes_object
    616, 624, 632, 640,                // unicode_object
};

// pystack's validateDebugOffsets uses the same bound: anything larger is not a real struct size.
constexpr uint64_t kMaxStructSize = 1u << 20;

class Reader {
public:
    explicit Reader(const unsigned char* base) : base_(base) {}
    uint64_t at(uint32_t pos) const {
        uint64_t v;
        std::memcpy(&v, base_ + pos, sizeof v);
        return v;
    }
    // A field offset is usable if it lies, with its width, inside its struct's declared size.
    bool field(uint32_t size_pos, uint32_t pos, uint32_t width, uint32_t& out) {
        uint64_t size = at(size_pos);
        uint64_t off = at(pos);
        if (size == 0 || size > kMaxStructSize || off + width > size) {
            ok_ = false;
            return false;
        }
        out = static_cast<uint32_t>(off);
        return true;
    }
    bool field(uint32_t size_pos, uint32_t pos, uint32_t width, int32_t& out) {
        uint32_t v = 0;
        if (!field(size_pos, pos, width, v)) return false;
        out = static_cast<int32_t>(v);
        return true;
    }
    bool ok() const { return ok_; }

private:
    const unsigned char* base_;
    bool ok_ = true;
};

} // namespace

bool debug_offsets_layout(const void* runtime, uint32_t version_hex, Layout& l, const char** why) {
    const Schema* s = nullptr;
    uint32_t minor = (version_hex >> 16) & 0xff;
    if (minor == 13) s = &kSchema313;
    if (minor == 14) s = &kSchema314;
    if (!s) {
        *why = "no _Py_DebugOffsets layout known for this version";
        return false;
    }
    if (!runtime) {
        *why = "_PyRuntime is not exported";
        return false;
    }
    auto* base = static_cast<const unsigned char*>(runtime);
    if (std::memcmp(base, "xdebugpy", 8) != 0) {
        *why = "_PyRuntime does not start with the debug offsets cookie";
        return false;
    }
    Reader r(base);
    if (r.at(8) != version_hex) {
        *why = "_Py_DebugOffsets.version differs from Py_Version";
        return false;
    }
    uint64_t free_threaded = r.at(16);
    if (free_threaded > 1) {
        *why = "_Py_DebugOffsets.free_threaded is not 0/1";
        return false;
    }

    l = Layout{};
    l.version_hex = version_hex;
    l.source = "debug_offsets";
    l.kind = FrameKind::InterpreterFrame;
    l.free_threaded = free_threaded != 0;

    r.field(s->interp_size, s->interp_id, 8, l.interp_id);
    r.field(s->ts_size, s->ts_interp, 8, l.ts_interp);
    r.field(s->ts_size, s->ts_current_frame, 8, l.ts_top);
    r.field(s->fr_size, s->fr_previous, 8, l.f_back);
    r.field(s->fr_size, s->fr_executable, 8, l.f_code);
    r.field(s->fr_size, s->fr_instr_ptr, 8, l.f_instr);
    r.field(s->fr_size, s->fr_owner, 1, l.f_owner);
    r.field(s->co_size, s->co_filename, 8, l.co_filename);
    r.field(s->co_size, s->co_qualname, 8, l.co_qualname);
    r.field(s->co_size, s->co_linetable, 8, l.co_linetable);
    r.field(s->co_size, s->co_firstlineno, 4, l.co_firstlineno);
    // co_code_adaptive is a flexible array member: its offset equals the struct size.
    l.co_code_adaptive = static_cast<uint32_t>(r.at(s->co_code_adaptive));
    if (l.co_code_adaptive == 0 || l.co_code_adaptive > r.at(s->co_size)) {
        *why = "_Py_DebugOffsets.code_object.co_code_adaptive is out of range";
        return false;
    }
    r.field(s->obj_size, s->obj_type, 8, l.ob_type);
    uint32_t tp_name = 0;
    r.field(s->type_size, s->type_tp_name, 8, tp_name);
    l.type_basicsize = tp_name + 8; // tp_basicsize follows tp_name in every version
    r.field(s->bytes_size, s->bytes_ob_size, 8, l.var_size);
    r.field(s->bytes_size, s->bytes_sval, 1, l.bytes_sval);
    r.field(s->str_size, s->str_state, 4, l.str_state);
    r.field(s->str_size, s->str_length, 8, l.str_length);
    l.str_ascii_size = static_cast<uint32_t>(r.at(s->str_ascii_size));
    if (!r.ok() || l.str_ascii_size == 0 || l.str_ascii_size > r.at(s->str_size)) {
        *why = "a _Py_DebugOffsets field lies outside its struct";
        return false;
    }
    // Not in the debug offsets. PyCompactUnicodeObject adds utf8_length and utf8 (3.12+).
    l.str_compact_size = l.str_ascii_size + 16;
    l.owner_generator = 1;
    // 3.13: FRAME_OWNED_BY_CSTACK = 3. 3.14 renumbered: INTERPRETER = 3 (each eval call's entry
    // frame), CSTACK = 4; both are shims. _PyFrame_IsIncomplete uses the same bound.
    l.owner_shim_min = 3;
    l.expect_code_basicsize = l.co_code_adaptive;

    if (minor == 14) {
        l.code_mask = ~uintptr_t{3}; // _PyStackRef tag bits
        if (l.free_threaded) {
            if (!r.field(s->fr_size, s->fr_tlbc_index, 4, l.f_tlbc_index) ||
                !r.field(s->co_size, s->co_tlbc, 8, l.co_tlbc) || l.f_tlbc_index == 0 ||
                l.co_tlbc == 0) {
                *why = "free-threaded 3.14 without thread-local bytecode offsets";
                return false;
            }
            l.str_state_shift = 8; // `interned` became a whole byte in free-threaded 3.14
        }
    }
    // co_version follows the six ints that start at co_firstlineno (3.12 to 3.14 alike).
    l.co_version = static_cast<int32_t>(l.co_firstlineno) + 24;
    // _co_firsttraceable (int) is followed by the pointer co_extra, then co_tlbc in 3.14t, then
    // co_code_adaptive: derived from the neighbour the debug offsets do give.
    int32_t after_extra =
        l.co_tlbc != kAbsent ? l.co_tlbc : static_cast<int32_t>(l.co_code_adaptive);
    l.co_firsttraceable = after_extra - 16;
    if (!l.free_threaded) {
        int32_t known = minor == 13 ? 184 : 192;
        if (l.co_firsttraceable != known)
            l.co_firsttraceable = kAbsent; // unfamiliar build: skip it
    }
    return true;
}

} // namespace gpuleak::python
