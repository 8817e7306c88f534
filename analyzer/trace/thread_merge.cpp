#include "trace/thread_merge.h"

#include <algorithm>
#include <map>
#include <optional>

#include "trace/event_chunk.h"

namespace gpuleak::analyzer {

class ThreadMerge::ThreadStream {
public:
    ThreadStream(uint32_t thread, std::vector<const format::BlockRef*> blocks)
        : thread_(thread), blocks_(std::move(blocks)) {}

    // Moves to the next timed record; false at the end of the thread's blocks. What it passes on
    // the way (definitions, if `untimed`, and the blocks it cannot read) goes to `out`. Inlined
    // into the merge, which calls it for every event; what it does between blocks and for the
    // few untimed records is out of line.
    [[gnu::always_inline]] bool advance(format::TraceFile& file, bool untimed, bool every_timed,
                                        MergeOutput& out) {
        for (;;) {
            if (cursor_) [[likely]] {
                while (cursor_->next(record_)) {
                    if (is_timed(record_.tag)) {
                        if (every_timed || record_.tag == format::Tag::Alloc ||
                            record_.tag == format::Tag::Marker)
                            return true;
                        pass_over(record_.ts);
                        continue;
                    }
                    untimed_record(untimed, out);
                }
                end_block(out);
            }
            if (!next_block(file, every_timed, out)) return false;
        }
    }

    uint32_t thread() const { return thread_; }
    uint32_t lane() const { return lane_; }
    const format::Record& record() const { return record_; }
    void add_passed_over(PassedOver& to) const {
        to.lanes.insert(to.lanes.end(), passed_.begin(), passed_.end());
        to.last_ts = std::max(to.last_ts, passed_last_ts_);
    }

private:
    [[gnu::noinline]] void untimed_record(bool untimed, MergeOutput& out) {
        // The recorder hands an exited thread's slot to the next new thread, which announces
        // itself: from here on the slot's events are another thread's.
        if (record_.tag == format::Tag::Thread && ++announced_ > 1)
            lane_ = static_cast<uint32_t>(announced_ - 1) << 16 | thread_;
        if (untimed) out.untimed(*block_, thread_, record_);
    }
    [[gnu::noinline]] void end_block(MergeOutput& out) {
        if (!cursor_->error().empty()) out.block_error(*block_, thread_, true, cursor_->error());
        cursor_.reset();
    }
    // Loads the next block that loads; false after the last.
    [[gnu::noinline]] bool next_block(format::TraceFile& file, bool every_timed, MergeOutput& out) {
        for (;;) {
            if (next_block_ >= blocks_.size()) return false;
            block_ = blocks_[next_block_++];
            if (!file.load(*block_, payload_)) {
                out.block_error(*block_, thread_, false, file.error());
                continue;
            }
            cursor_ = format::RecordCursor::block(file.version(), payload_.data(), payload_.size(),
                                                  block_->first_ts);
            if (!every_timed) cursor_->times_and_stacks_only(); // what pass 1 reads
            return true;
        }
    }

    // A lane's records are consecutive in its slot's stream: one entry per lane.
    void pass_over(uint64_t ts) {
        if (passed_.empty() || passed_.back().lane != lane_)
            passed_.push_back({lane_, ts, ts});
        else
            passed_.back().last_ts = ts;
        passed_last_ts_ = std::max(passed_last_ts_, ts);
    }

    uint32_t thread_;
    uint32_t lane_ = thread_;
    uint64_t announced_ = 0;
    std::vector<const format::BlockRef*> blocks_;
    size_t next_block_ = 0;
    const format::BlockRef* block_ = nullptr; // the one being read
    std::vector<uint8_t> payload_;
    std::optional<format::RecordCursor> cursor_;
    format::Record record_;
    std::vector<PassedOver::Lane> passed_;
    uint64_t passed_last_ts_ = 0;
};

ThreadMerge::ThreadMerge(format::TraceFile& file, bool untimed, Timed timed)
    : file_(file), untimed_(untimed), every_timed_(timed == Timed::All) {
    std::map<uint32_t, std::vector<const format::BlockRef*>> by_thread;
    for (const auto& b : file.blocks())
        if (b.thread_index != format::kGlobalThreadIndex) by_thread[b.thread_index].push_back(&b);
    for (auto& [thread, blocks] : by_thread) {
        std::sort(blocks.begin(), blocks.end(),
                  [](const format::BlockRef* a, const format::BlockRef* b) {
                      return a->sequence < b->sequence;
                  });
        streams_.push_back(std::make_unique<ThreadStream>(thread, std::move(blocks)));
    }
    head_ts_.assign(streams_.size(), 0);
}

ThreadMerge::~ThreadMerge() = default;

// Inlined into head(), once for every event.
[[gnu::always_inline]] inline bool ThreadMerge::advance(size_t stream, MergeOutput& out) {
    if (!streams_[stream]->advance(file_, untimed_, every_timed_, out)) return false;
    head_ts_[stream] = streams_[stream]->record().ts;
    return true;
}

void ThreadMerge::push(size_t stream) {
    heap_.push_back(stream);
    std::push_heap(heap_.begin(), heap_.end(), [this](size_t a, size_t b) { return less(b, a); });
}

void ThreadMerge::sift_down() {
    size_t n = heap_.size(), i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) return;
        if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
        if (!less(heap_[child], heap_[i])) return;
        std::swap(heap_[i], heap_[child]);
        i = child;
    }
}

size_t ThreadMerge::pop() {
    std::pop_heap(heap_.begin(), heap_.end(), [this](size_t a, size_t b) { return less(b, a); });
    size_t stream = heap_.back();
    heap_.pop_back();
    return stream;
}

size_t ThreadMerge::head(MergeOutput& out) {
    if (!started_) {
        started_ = true;
        for (size_t i = 0; i < streams_.size(); ++i)
            if (advance(i, out)) push(i);
    }
    size_t next = kNoStream;
    if (delivered_ != kNoStream) {
        size_t s = delivered_;
        delivered_ = kNoStream;
        if (advance(s, out)) {
            // Still ahead of every other thread (always, with one thread): no heap traffic.
            if (heap_.empty() || less(s, heap_.front())) {
                next = s;
            } else {
                // The heap's first is next; s takes its place (one sift instead of a push and a
                // pop: threads that take turns event by event do this for every event).
                next = heap_.front();
                heap_.front() = s;
                sift_down();
            }
        }
    }
    if (next == kNoStream && !heap_.empty()) next = pop();
    delivered_ = next;
    return next;
}

void ThreadMerge::fill(EventChunk& out) {
    while (!out.full()) {
        size_t s = head(out);
        if (s == kNoStream) {
            out.last = true;
            return;
        }
        const ThreadStream& stream = *streams_[s];
        out.event(stream.thread(), stream.lane(), stream.record());
    }
}

PassedOver ThreadMerge::passed_over() const {
    PassedOver out;
    for (const auto& stream : streams_)
        stream->add_passed_over(out);
    return out;
}

bool ThreadMerge::next(MergeOutput& out, MergedEvent& event) {
    size_t s = head(out);
    if (s == kNoStream) return false;
    const ThreadStream& stream = *streams_[s];
    event = {stream.thread(), stream.lane(), &stream.record()};
    return true;
}

} // namespace gpuleak::analyzer
