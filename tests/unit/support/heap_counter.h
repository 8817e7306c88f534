// Bytes held on the heap by a test program that links heap_counter.cpp, and the most held since a
// test set a mark: how a test shows that work over millions of items keeps nothing per item.
// Counted by replacing operator new and delete, or, in a sanitizer's build (whose runtime owns
// them), through the allocation hooks the sanitizer calls.
#pragma once

#include <cstddef>

namespace gpuleak::test {

// Starts a measurement: the peak counts from what is held now.
void heap_mark();
// The most held above the mark since heap_mark().
size_t heap_peak_above_mark();

} // namespace gpuleak::test
