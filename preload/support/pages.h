#pragma once

#include <cstddef>

namespace gpuleak {

// Zeroed memory straight from mmap, so the tracer never touches the application's heap on the hot
// path.
void* map_pages(size_t bytes);
void unmap_pages(void* p, size_t bytes);

} // namespace gpuleak
