// Walks one thread's frame chain, innermost first.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "layout.h"
#include "python_stack.h"

namespace gpuleak::python {

// Reads one field of a live interpreter object. Only the owning thread mutates its frames, and
// that thread is the caller, blocked in the hook, so plain loads are enough.
template <typename T> inline T load(uintptr_t base, uint32_t offset) {
    T value;
    __builtin_memcpy(&value, reinterpret_cast<const void*>(base + offset), sizeof value);
    return value;
}

// Whether p could be an object or frame pointer: p >= 4096 and 8-byte aligned, in one comparison.
// Past the subtraction the alignment bits are unchanged, and the rotation moves them to the top,
// where any of them set makes the value large.
constexpr bool plausible(uintptr_t p) {
    return std::rotr(p - 4096, 3) < (uintptr_t{1} << 61) - 512;
}
static_assert(!plausible(0) && !plausible(8) && !plausible(4088) && !plausible(4095) &&
              plausible(4096) && !plausible(4097) && !plausible(4100) && plausible(4104) &&
              plausible(~uintptr_t{7}) && !plausible(~uintptr_t{0}) &&
              !plausible(~uintptr_t{0} - 4));

// Whether `obj` is a plausible pointer to an object whose type is exactly `type`.
inline bool has_type(const Layout& l, uintptr_t obj, uintptr_t type) {
    return plausible(obj) && load<uintptr_t>(obj, l.ob_type) == type;
}

// Fills out[i].code_id with the code object's *address* (callers swap in the registry id),
// plus byte_offset and is_entry. Stops after `max` kept frames.
size_t walk_frames(const Layout& l, uintptr_t code_type, uintptr_t tstate, PyFrame* out,
                   size_t max);

} // namespace gpuleak::python
