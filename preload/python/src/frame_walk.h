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

// A code object's id, asked once for each run of frames that run it, when the first of them is
// kept: within one walk a code address cannot change hands, since each walked frame holds a
// reference to its code. 0 where the id could not be given (the frames keep 0).
using CodeIdFn = uint64_t (*)(void* ctx, uintptr_t code);

// Fills out[i].code_id with id(ctx, code), or without `id` with the code object's *address*,
// plus byte_offset and is_entry. Stops after `max` kept frames.
size_t walk_frames(const Layout& l, uintptr_t code_type, uintptr_t tstate, PyFrame* out, size_t max,
                   CodeIdFn id = nullptr, void* ctx = nullptr);

} // namespace gpuleak::python
