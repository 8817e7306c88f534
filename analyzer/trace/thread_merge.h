// The trace's timed records from all recording threads, merged into one time-ordered stream.
// Each thread's blocks are read in sequence order and hold their records in time order, so a
// k-way merge over threads needs one decoded block per thread: memory stays bounded by the number
// of threads, not the length of the trace. The merge reads, decompresses and decodes the blocks
// and packs what it delivers into chunks (event_chunk.h), so that it can run on a core of its own
// while its reader works on the chunk before, or hands its events to a reader in its own thread
// one by one (event_stream.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuleak/format/reader.h"
#include "trace/merge_output.h"

namespace gpuleak::analyzer {

class EventChunk;

// Records with a timestamp: the events the merge delivers (from recording threads only). Inline:
// the merge asks it of every record.
inline bool is_timed(format::Tag tag) {
    switch (tag) {
    case format::Tag::Alloc:
    case format::Tag::Free:
    case format::Tag::AllocFailed:
    case format::Tag::VmmRetain:
    case format::Tag::VmmRelease:
    case format::Tag::VmmMap:
    case format::Tag::VmmUnmap:
    case format::Tag::Marker:
        return true;
    default:
        return false;
    }
}

// Which timed records a merge delivers. Pass 1 reads only allocations and markers: the others it
// passes over, noting only their threads' first and last times (PassedOver), which spares them the
// merge, the packing and the reader.
enum class Timed { All, AllocationsAndMarkers };

// What a merge of Timed::AllocationsAndMarkers passed over: per lane (event_stream.h's Event), the
// first and last time of its records passed over, and the latest time of any.
struct PassedOver {
    struct Lane {
        uint32_t lane;
        uint64_t first_ts, last_ts;
    };
    std::vector<Lane> lanes;
    uint64_t last_ts = 0;
};

// Ties in time go to the lower thread index, then to the thread's own order.
class ThreadMerge {
public:
    // `untimed`: also deliver the records between the timed ones, as each thread's stream reaches
    // them (pass 1 reads the definitions in the merge). Block errors are always delivered.
    ThreadMerge(format::TraceFile& file, bool untimed, Timed timed = Timed::All);
    ~ThreadMerge();
    ThreadMerge(const ThreadMerge&) = delete;
    ThreadMerge& operator=(const ThreadMerge&) = delete;

    // The merge is the only user of the trace file while it lasts. Either way of reading it:
    // Appends to `out` until it is full or the merge ends (then out.last is set).
    void fill(EventChunk& out);
    // The next event (false at the end), with what comes before it put to `out`.
    bool next(MergeOutput& out, MergedEvent& event);
    // Once the merge has ended: the records it passed over (none with Timed::All).
    PassedOver passed_over() const;

private:
    class ThreadStream;
    // Stream a's head comes before stream b's. The heads' times sit in one array (head_ts_) so the
    // comparison the merge makes per event reads no record.
    bool less(size_t a, size_t b) const {
        return head_ts_[a] < head_ts_[b] || (head_ts_[a] == head_ts_[b] && a < b);
    }
    bool advance(size_t stream, MergeOutput& out); // to its next event; notes its time
    void push(size_t stream);
    size_t pop();
    void sift_down();              // restores the heap after its first element was replaced
    size_t head(MergeOutput& out); // advances the stream delivered last; the next head's stream

    static constexpr size_t kNoStream = ~size_t{0};

    format::TraceFile& file_;
    bool untimed_;
    bool every_timed_;
    bool started_ = false;
    std::vector<std::unique_ptr<ThreadStream>> streams_;
    std::vector<uint64_t> head_ts_; // per stream, the time of its head
    std::vector<size_t> heap_;      // streams with a head, min-heap by less()
    // Its head was delivered and it is not advanced yet (not in heap_).
    size_t delivered_ = kNoStream;
};

} // namespace gpuleak::analyzer
