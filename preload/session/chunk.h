// A chunk is one future trace block: the records of one thread, in time order.
#pragma once

#include <cstdint>

namespace gpuleak {

inline constexpr uint32_t kChunkPayload = 64 * 1024;

struct Chunk {
    Chunk* next = nullptr;
    uint32_t used = 0;
    uint32_t thread_index = 0;
    uint64_t sequence = 0;
    uint64_t first_ts = 0;
    uint64_t last_ts = 0;
    bool has_ts = false;
    bool closing = false; // holds the TraceEnd record: written even once the trace is capped
    uint8_t payload[kChunkPayload];
};

} // namespace gpuleak
