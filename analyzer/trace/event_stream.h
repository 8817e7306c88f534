// Pass 2: the trace's timed records from all threads, merged into one time-ordered stream.
// Each thread's blocks are read in sequence order and hold their records in time order, so a
// k-way merge over threads needs one decoded block per thread: memory stays bounded by the number
// of threads, not the length of the trace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpuleak/format/reader.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

struct Event {
    uint32_t thread; // the recording slot: stack ids are per slot
    const format::Record* record;
    // The thread itself: a slot is handed to a new thread when its last one exits, so each
    // thread that used a slot after the first gets its own lane (`thread` for the first).
    uint32_t lane = thread;
};

// Records with a timestamp: the events pass 2 delivers (from recording threads only).
bool is_timed(format::Tag tag);

// For a reader of every record (pass 1, which reads the definitions in the same merge): the records
// between the timed ones, as each thread's stream reaches them, and the blocks it could not read.
// Without one, the stream skips those records and adds its own warnings to the trace.
class RecordSink {
public:
    virtual ~RecordSink() = default;
    virtual void untimed(const format::BlockRef& block, const format::Record& r) = 0;
    // `malformed`: the block's records stop at a malformed one; else the block could not be loaded.
    virtual void block_error(const format::BlockRef& block, bool malformed,
                             const std::string& error) = 0;
};

// The merge itself. Ties in time go to the lower thread index, then to the thread's own order.
class EventStream {
public:
    explicit EventStream(LoadedTrace& trace, RecordSink* sink = nullptr);
    ~EventStream();
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

    // The next event, valid until the following call of next(); nullptr at the end.
    const Event* next();
    // The time of the event next() would return (~0 at the end), without invalidating the last one.
    uint64_t peek_ts();
    // False if a block could not be read (the warning is added to the trace).
    bool complete() const { return trace_.warnings.size() == warnings_before_; }

private:
    class ThreadStream;
    // Stream a's head comes before stream b's. The heads' times sit in one array (head_ts_) so the
    // comparison the merge makes per event reads no record.
    bool less(size_t a, size_t b) const {
        return head_ts_[a] < head_ts_[b] || (head_ts_[a] == head_ts_[b] && a < b);
    }
    bool advance(size_t stream); // moves the stream to its next event and notes its time
    void push(size_t stream);
    size_t pop();
    void sift_down(); // restores the heap after its first element was replaced
    void settle();    // advances the stream delivered last and finds the next head

    static constexpr size_t kNoStream = ~size_t{0};

    LoadedTrace& trace_;
    RecordSink* sink_;
    size_t warnings_before_;
    std::vector<std::unique_ptr<ThreadStream>> streams_;
    std::vector<uint64_t> head_ts_; // per stream, the time of its head
    std::vector<size_t> heap_;      // streams with a head, min-heap by less()
    size_t delivered_ = kNoStream;  // its head was returned by next() and it is not advanced yet
    size_t ready_ = kNoStream;      // known to hold the next head (not in heap_)
    Event event_{};
};

// Calls `on_event` for every timed record in time order (ties: thread order). Returns false if a
// block could not be read (the warning is added to the trace). A template, so that the call per
// event is inlined rather than made through std::function.
template <typename OnEvent> bool for_each_event(LoadedTrace& trace, OnEvent&& on_event) {
    EventStream stream(trace);
    while (const Event* e = stream.next())
        on_event(*e);
    return stream.complete();
}

} // namespace gpuleak::analyzer
