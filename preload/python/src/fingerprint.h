// What identifies a live code object beyond its address. Pointer fields alone are not enough:
// a loop that exec()s similar functions frees and reallocates the same addresses in the same
// order, so the code object, its (interned) name and its line table can all reappear at their
// old addresses with a different line table inside (measured: ~0.3% of 5,000 iterations).
#pragma once

#include <cstdint>

#include "code_registry.h"
#include "frame_walk.h"
#include "layout.h"
#include "python_stack.h"

namespace gpuleak::python {

// The pointers and first line that fingerprint() reads, with no content yet: a thread's cache
// (code_cache.h) compares these before the content, so both read exactly the same fields.
inline CodeKey code_pointers(const Layout& l, uintptr_t code) {
    return {code,
            load<uintptr_t>(code, l.co_filename),
            load<uintptr_t>(code, l.co_qualname),
            load<uintptr_t>(code, l.co_linetable),
            load<int32_t>(code, l.co_firstlineno),
            0};
}

// 3.12+: co_version, a per-code-object counter. 3.9-3.11 have no such counter: the qualname's
// cached hash and a digest of the line table's bytes stand in for it.
CodeKey fingerprint(const Layout& l, uintptr_t code);

// Up to 3.11, what fingerprint() digests (the qualname's hash, the line table's size and the bytes
// the digest covers), copied into a cache slot; and whether a code object's qualname and line
// table still hold exactly that. Equal copies give equal digests, so a slot whose pointers match
// and whose copy is the same holds this code object's fingerprint without computing it.
inline bool digests_content(const Layout& l) {
    return l.co_version == kAbsent;
}
void copy_content(const Layout& l, uintptr_t qualname, uintptr_t table, CodeCache::Slot& slot);
bool same_content(const Layout& l, uintptr_t qualname, uintptr_t table,
                  const CodeCache::Slot& slot);

} // namespace gpuleak::python
