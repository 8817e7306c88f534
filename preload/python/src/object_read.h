// Copies what a CodeInfo needs out of live str and bytes objects, without the C API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "layout.h"

namespace gpuleak::python {

// UTF-8 of an exact, compact str, truncated to `cap` bytes on a code point boundary. Anything
// else (NULL, another type, a legacy non-compact string) yields "<?>". Lone surrogates (from
// surrogateescape'd file names) become U+FFFD so the result is always valid UTF-8.
std::string_view read_str(const Layout& l, uintptr_t str_type, uintptr_t obj, char* buf,
                          size_t cap);

// The payload of an exact bytes object, or an empty span.
std::span<const uint8_t> read_bytes(const Layout& l, uintptr_t bytes_type, uintptr_t obj);

} // namespace gpuleak::python
