// Process-wide records (Process, Module, TraceEnd) go to their own block stream, written at once.
#pragma once

#include <cstddef>

#include "gpuleak/format/encoder.h"

namespace gpuleak::global_stream {

// Runs `fill` with an encoder over at least `need` bytes of a fresh block under the stream's lock;
// `timed` records get their timestamp from `now` (first record of the block: dt 0).
template <typename Fill> void write(size_t need, Fill&& fill);

// Implementation detail of write(): begin/commit a block.
format::Encoder* begin(size_t need);
void commit(format::Encoder* e);
void reset_after_fork_child();

template <typename Fill> void write(size_t need, Fill&& fill) {
    if (format::Encoder* e = begin(need)) {
        fill(*e);
        commit(e);
    }
}

} // namespace gpuleak::global_stream
