#include "heap_counter.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace gpuleak::test {
namespace {

std::atomic<size_t> held{0}, peak{0}, mark{0};

void* take(size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    size_t now = held += malloc_usable_size(p);
    for (size_t top = peak.load(); now > top && !peak.compare_exchange_weak(top, now);) {
    }
    return p;
}

void give(void* p) {
    if (!p) return;
    held -= malloc_usable_size(p);
    std::free(p);
}

} // namespace

size_t heap_held() {
    return held.load();
}

void heap_mark() {
    mark = held.load();
    peak = mark.load();
}

size_t heap_peak_above_mark() {
    size_t top = peak.load(), base = mark.load();
    return top > base ? top - base : 0;
}

} // namespace gpuleak::test

void* operator new(size_t n) {
    return gpuleak::test::take(n);
}
void* operator new[](size_t n) {
    return gpuleak::test::take(n);
}
void operator delete(void* p) noexcept {
    gpuleak::test::give(p);
}
void operator delete[](void* p) noexcept {
    gpuleak::test::give(p);
}
void operator delete(void* p, size_t) noexcept {
    gpuleak::test::give(p);
}
void operator delete[](void* p, size_t) noexcept {
    gpuleak::test::give(p);
}
