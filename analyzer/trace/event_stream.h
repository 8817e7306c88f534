// Pass 2: the trace's timed records from all threads, merged into one time-ordered stream
// (thread_merge.h). The merge runs on a thread of its own, a few chunks ahead of its reader, where
// the process may use a second core; else in the reader's thread, event by event.
#pragma once

#include <array>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpuleak/format/reader.h"
#include "trace/event_chunk.h"
#include "trace/loaded_trace.h"
#include "trace/thread_merge.h"

namespace gpuleak::analyzer {

struct Event {
    uint32_t thread; // the recording slot: stack ids are per slot
    const format::Record* record;
    // The thread itself: a slot is handed to a new thread when its last one exits, so each
    // thread that used a slot after the first gets its own lane (`thread` for the first).
    uint32_t lane = thread;
};

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

// Ties in time go to the lower thread index, then to the thread's own order. While the stream
// lasts, it alone uses the trace's file; its reader alone, the trace's warnings and the sink.
class EventStream {
public:
    explicit EventStream(LoadedTrace& trace, RecordSink* sink = nullptr, Timed timed = Timed::All);
    ~EventStream();
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

    // The next event, valid until the following call of next(); nullptr at the end.
    const Event* next();
    // False if a block could not be read (the warning is added to the trace).
    bool complete() const { return trace_.warnings.size() == warnings_before_; }
    // Once next() has returned nullptr: the timed records not delivered (Timed).
    PassedOver passed_over() const { return merge_.passed_over(); }

    // Whether streams merge on a thread of their own: with two CPUs or more to run on, unless
    // GPULEAK_REPORT_THREADS=1.
    static bool merges_in_background();

private:
    // Without a second core: the merge's events as they come, the rest put straight to the sink
    // or the warnings (packing events into chunks for no other core would cost 10 ns an event).
    class Direct final : public MergeOutput {
    public:
        explicit Direct(EventStream& stream) : stream_(stream) {}
        void untimed(const format::BlockRef& block, uint32_t, const format::Record& r) override {
            if (stream_.sink_) stream_.sink_->untimed(block, r);
        }
        void block_error(const format::BlockRef& block, uint32_t thread, bool malformed,
                         const std::string& error) override {
            stream_.block_error(block, thread, malformed, error);
        }

    private:
        EventStream& stream_;
    };

    bool next_chunk(); // false at the end of the merge
    void produce();    // the merging thread
    void block_error(const format::BlockRef& block, uint32_t thread, bool malformed,
                     const std::string& error);

    static constexpr size_t kRing = 4;

    LoadedTrace& trace_;
    RecordSink* sink_;
    size_t warnings_before_;
    // The merge and the reader write their own fields for every event, each on lines of its own
    // (also apart from the chunks' headers), so that neither core takes the other's lines away.
    static constexpr size_t kLine = 128; // two: the neighbouring line is fetched with a line
    struct alignas(kLine) AlignedChunk : EventChunk {};
    alignas(kLine) ThreadMerge merge_;
    Direct direct_{*this};
    std::array<AlignedChunk, kRing> ring_;
    alignas(kLine) EventChunk* chunk_ = nullptr; // the one being read
    size_t position_ = 0;                        // in chunk_
    // Per tag, the record its packed entries unpack into: other tags' fields stay as they were.
    std::array<format::Record, 32> unpacked_;
    Event event_{};

    // The merging thread and the chunks it filled: chunk i is ring_[i % kRing]; the reader holds
    // the one at `released_` and the merge may fill up to kRing - 1 ahead.
    std::thread worker_;
    alignas(kLine) std::mutex mutex_;
    std::condition_variable filled_, emptied_;
    size_t produced_ = 0, released_ = 0;
    bool stop_ = false;
    std::exception_ptr failure_; // what the merge threw; the reader rethrows it
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
