#include "recorder/global_stream.h"

#include <mutex>
#include <new>

#include "recorder/recorder.h"
#include "session/trace_writer.h"

namespace gpuleak::global_stream {
namespace {

std::mutex g_mutex;
uint64_t g_sequence = 0;
Chunk* g_chunk = nullptr;
alignas(format::Encoder) unsigned char g_encoder_storage[sizeof(format::Encoder)];

} // namespace

format::Encoder* begin(size_t need, bool closing) {
    if (need > kChunkPayload - format::kTimeTrailerBytes) return nullptr;
    g_mutex.lock();
    g_chunk = writer::acquire_chunk();
    if (!g_chunk) {
        g_mutex.unlock();
        return nullptr;
    }
    uint64_t t = recorder::now();
    g_chunk->thread_index = format::kGlobalThreadIndex;
    g_chunk->sequence = g_sequence++;
    g_chunk->first_ts = g_chunk->last_ts = t;
    g_chunk->has_ts = true;
    g_chunk->closing = closing;
    return new (g_encoder_storage) format::Encoder(g_chunk->payload, g_chunk->column_top());
}

void commit(format::Encoder* e) {
    g_chunk->used = static_cast<uint32_t>(e->position() - g_chunk->payload);
    g_chunk->time_used = static_cast<uint32_t>(g_chunk->column_top() - e->column());
    writer::write_now(g_chunk);
    g_chunk = nullptr;
    g_mutex.unlock();
}

void reset_after_fork_child() {
    new (&g_mutex) std::mutex();
    g_sequence = 0;
    g_chunk = nullptr;
}

} // namespace gpuleak::global_stream
