// Walks one thread's frame chain, innermost first.
#pragma once

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

// Fills out[i].code_id with the code object's *address* (callers swap in the registry id),
// plus byte_offset and is_entry. Stops after `max` kept frames.
size_t walk_frames(const Layout& l, uintptr_t code_type, uintptr_t tstate, PyFrame* out,
                   size_t max);

} // namespace gpuleak::python
