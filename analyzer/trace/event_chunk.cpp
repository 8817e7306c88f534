#include "trace/event_chunk.h"

#include <algorithm>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuleak::analyzer {

using format::Tag;

namespace {

uint64_t block_field(const format::BlockRef& block) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&block));
}

uint64_t bits(int64_t v) {
    return static_cast<uint64_t>(v);
}
int64_t signed_bits(uint64_t v) {
    return static_cast<int64_t>(v);
}

bool fits_int32(int64_t v) {
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

} // namespace

[[gnu::always_inline]] inline PackedEntry EventChunk::make(PackedEntry::Kind kind, uint32_t thread,
                                                           uint32_t lane, Tag tag) {
    PackedEntry e{};
    e.kind = kind;
    e.thread = thread;
    e.lane = lane;
    e.tag = tag;
    return e;
}

[[gnu::always_inline]] inline void EventChunk::store(const PackedEntry& e) {
    // Beyond kEntries only with a block of many definitions between two events.
    if (size_ == entries_.size()) entries_.resize(std::max(kEntries + 64, 2 * size_));
    PackedEntry& slot = entries_[size_++];
#if defined(__SSE2__)
    // Past the caches: the line is the reader's, and a plain store would first fetch it from the
    // other core (measured: that doubled the merge's time).
    auto* dst = reinterpret_cast<__m128i*>(&slot);
    auto* src = reinterpret_cast<const __m128i*>(&e);
    for (int i = 0; i < 4; ++i)
        _mm_stream_si128(dst + i, _mm_load_si128(src + i));
#else
    slot = e;
#endif
}

void EventChunk::publish() {
#if defined(__SSE2__)
    _mm_sfence(); // streamed stores are not ordered by the lock that hands the chunk over
#endif
}

format::Record& EventChunk::next_record(PackedEntry& e) {
    e.field[0] = records_used_;
    if (records_used_ == records_.size()) records_.emplace_back();
    return records_[records_used_++];
}

void EventChunk::whole(PackedEntry& e, const format::Record& r) {
    e.kind = PackedEntry::Kind::Whole;
    next_record(e) = r; // copy-assigned: the strings keep their capacity
    store(e);
}

void EventChunk::event(uint32_t thread, uint32_t lane, const format::Record& r) {
    PackedEntry e = make(PackedEntry::Kind::Timed, thread, lane, r.tag);
    e.ts = r.ts;
    switch (r.tag) {
    case Tag::Alloc:
        if (!fits_int32(r.device)) break;
        e.field[0] = r.address;
        e.field[1] = r.size;
        e.field[2] = r.stack;
        e.field[3] = r.py_stack;
        e.device = static_cast<int32_t>(r.device);
        e.small[0] = static_cast<uint8_t>(r.api);
        e.small[1] = static_cast<uint8_t>(r.kind);
        return store(e);
    case Tag::Free:
        e.field[0] = r.address;
        e.field[1] = bits(r.result);
        e.small[0] = static_cast<uint8_t>(r.api);
        e.small[1] = static_cast<uint8_t>(r.space);
        return store(e);
    case Tag::VmmRetain:
    case Tag::VmmRelease:
    case Tag::VmmMap:
    case Tag::VmmUnmap:
        e.field[0] = r.address;
        e.field[1] = r.size;
        e.field[2] = r.offset;
        e.field[3] = r.handle;
        return store(e);
    default:
        break;
    }
    whole(e, r); // markers, failed allocations: strings, or more fields than a line holds
}

void EventChunk::untimed(const format::BlockRef& block, uint32_t thread, const format::Record& r) {
    PackedEntry e = make(PackedEntry::Kind::Untimed, thread, thread, r.tag);
    e.field[4] = block_field(block);
    switch (r.tag) {
    case Tag::StackNode:
        e.field[0] = r.id;
        e.field[1] = r.parent;
        e.field[2] = r.ip;
        return store(e);
    case Tag::PyStackNode:
        e.field[0] = r.id;
        e.field[1] = r.parent;
        e.field[2] = r.ip;
        e.field[3] = bits(r.line_or_offset);
        e.small[0] = r.is_entry;
        return store(e);
    default:
        whole(e, r);
    }
}

void EventChunk::block_error(const format::BlockRef& block, uint32_t thread, bool malformed,
                             const std::string& error) {
    PackedEntry e = make(PackedEntry::Kind::BlockError, thread, thread, Tag{});
    e.field[4] = block_field(block);
    e.small[0] = malformed;
    next_record(e).text = error;
    store(e);
}

const format::Record& EventChunk::record(const PackedEntry& e, format::Record& out) const {
    if (e.kind == PackedEntry::Kind::Whole) return records_[e.field[0]];
    out.tag = e.tag;
    switch (e.tag) {
    case Tag::Alloc:
        out.ts = e.ts;
        out.address = e.field[0];
        out.size = e.field[1];
        out.stack = e.field[2];
        out.py_stack = e.field[3];
        out.device = e.device;
        out.api = static_cast<format::Api>(e.small[0]);
        out.kind = static_cast<format::MemKind>(e.small[1]);
        break;
    case Tag::Free:
        out.ts = e.ts;
        out.address = e.field[0];
        out.result = signed_bits(e.field[1]);
        out.api = static_cast<format::Api>(e.small[0]);
        out.space = static_cast<format::Space>(e.small[1]);
        break;
    case Tag::VmmRetain:
    case Tag::VmmRelease:
    case Tag::VmmMap:
    case Tag::VmmUnmap:
        out.ts = e.ts;
        out.address = e.field[0];
        out.size = e.field[1];
        out.offset = e.field[2];
        out.handle = e.field[3];
        break;
    case Tag::StackNode:
        out.id = e.field[0];
        out.parent = e.field[1];
        out.ip = e.field[2];
        break;
    case Tag::PyStackNode:
        out.id = e.field[0];
        out.parent = e.field[1];
        out.ip = e.field[2];
        out.line_or_offset = signed_bits(e.field[3]);
        out.is_entry = e.small[0] != 0;
        break;
    default:
        break; // only whole records have other tags
    }
    return out;
}

} // namespace gpuleak::analyzer
