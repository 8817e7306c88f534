#include "heap_counter.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace gpuleak::test {
namespace {

std::atomic<size_t> held{0}, peak{0}, mark{0};

void add(size_t n) {
    size_t now = held += n;
    for (size_t top = peak.load(); now > top && !peak.compare_exchange_weak(top, now);) {
    }
}

void remove(size_t n) {
    held -= n;
}

} // namespace

void heap_mark() {
    mark = held.load();
    peak = mark.load();
}

size_t heap_peak_above_mark() {
    size_t top = peak.load(), base = mark.load();
    return top > base ? top - base : 0;
}

} // namespace gpuleak::test

// GCC says so with __SANITIZE_*__, clang (14) with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HEAP_COUNTER_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HEAP_COUNTER_SANITIZED 1
#endif
#endif

#ifdef HEAP_COUNTER_SANITIZED
// The sanitizer's runtime owns operator new (a replacement would pair its allocations with the
// wrong release): count through the hooks it calls on every allocation and release instead.
extern "C" {
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                              void (*free_hook)(const volatile void*));
size_t __sanitizer_get_allocated_size(const volatile void* p);
}

namespace {

void on_malloc(const volatile void*, size_t n) {
    gpuleak::test::add(n);
}

void on_free(const volatile void* p) {
    if (p) gpuleak::test::remove(__sanitizer_get_allocated_size(p));
}

const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);

} // namespace
#else
namespace {

void* take(size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    gpuleak::test::add(malloc_usable_size(p));
    return p;
}

void give(void* p) {
    if (!p) return;
    gpuleak::test::remove(malloc_usable_size(p));
    std::free(p);
}

} // namespace

void* operator new(size_t n) {
    return take(n);
}
void* operator new[](size_t n) {
    return take(n);
}
void operator delete(void* p) noexcept {
    give(p);
}
void operator delete[](void* p) noexcept {
    give(p);
}
void operator delete(void* p, size_t) noexcept {
    give(p);
}
void operator delete[](void* p, size_t) noexcept {
    give(p);
}
#endif
