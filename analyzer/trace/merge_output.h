// What the merge (thread_merge.h) hands out besides its events, and where it puts it: a chunk for
// a reader on another core (event_chunk.h), or the reader itself (event_stream.h).
#pragma once

#include <cstdint>
#include <string>

#include "gpuleak/format/reader.h"

namespace gpuleak::analyzer {

// Where the merge puts what it passes between events: definitions (when asked for) and the blocks
// it cannot read. Rare beside the events, so a virtual call each.
class MergeOutput {
public:
    virtual ~MergeOutput() = default;
    virtual void untimed(const format::BlockRef& block, uint32_t thread,
                         const format::Record& r) = 0;
    virtual void block_error(const format::BlockRef& block, uint32_t thread, bool malformed,
                             const std::string& error) = 0;
};

// One event of the merge, valid until the merge moves on.
struct MergedEvent {
    uint32_t thread;
    uint32_t lane;
    const format::Record* record;
};

} // namespace gpuleak::analyzer
