// Appending records to the calling thread's chunk. Callers hold ts->lock.
#pragma once

#include <cstddef>

#include "gpuleak/format/encoder.h"
#include "recorder/thread_state.h"

namespace gpuleak::recorder {

// Makes room for `need` bytes in the thread's chunk (sealing a full one); false if no chunk could
// be had.
bool reserve(ThreadState* ts, size_t need);
format::Encoder encoder(ThreadState* ts);
void commit(ThreadState* ts, const format::Encoder& e);

} // namespace gpuleak::recorder
