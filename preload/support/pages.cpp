#include "support/pages.h"

#include <sys/mman.h>

namespace gpuleak {

void* map_pages(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

void unmap_pages(void* p, size_t bytes) {
    if (p) munmap(p, bytes);
}

} // namespace gpuleak
