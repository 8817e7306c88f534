// Process-wide records (Process, Module, TraceEnd) go to their own block stream, written at once.
#pragma once

#include <cstddef>

#include "gpuleak/format/encoder.h"

namespace gpuleak::global_stream {

// Runs `fill` with an encoder over at least `need` bytes of a fresh block under the stream's lock
// and writes the block at once. The block's time is now(), so its first timed record has dt 0.
// `closing`: the block holds the TraceEnd record (written even into a capped trace).
template <typename Fill> void write(size_t need, Fill&& fill, bool closing = false);

// Implementation detail of write(): begin/commit a block.
format::Encoder* begin(size_t need, bool closing);
void commit(format::Encoder* e);
void reset_after_fork_child();

template <typename Fill> void write(size_t need, Fill&& fill, bool closing) {
    if (format::Encoder* e = begin(need, closing)) {
        fill(*e);
        commit(e);
    }
}

} // namespace gpuleak::global_stream
