// A chunk is one future trace block: the records of one thread, in time order.
#pragma once

#include <cstdint>

#include "gpuleak/format/records.h"

namespace gpuleak {

inline constexpr uint32_t kChunkPayload = 64 * 1024;

struct Chunk {
    Chunk* next = nullptr;
    uint32_t used = 0;      // bytes of records at the start of the payload
    uint32_t time_used = 0; // bytes of the time column, below column_top()
    uint32_t thread_index = 0;
    uint64_t sequence = 0;
    uint64_t first_ts = 0;
    uint64_t last_ts = 0;
    bool has_ts = false;
    bool closing = false; // holds the TraceEnd record: written even once the trace is capped
    uint8_t payload[kChunkPayload];

    // The time column grows down from here; the trailer pack_block writes takes the rest.
    uint8_t* column_top() { return payload + kChunkPayload - format::kTimeTrailerBytes; }
    uint32_t room() const { return kChunkPayload - format::kTimeTrailerBytes - used - time_used; }
};

} // namespace gpuleak
