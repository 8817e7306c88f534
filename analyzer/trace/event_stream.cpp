#include "trace/event_stream.h"

#include <algorithm>
#include <map>
#include <optional>

namespace gpuleak::analyzer {

bool is_timed(format::Tag tag) {
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

class EventStream::ThreadStream {
public:
    ThreadStream(uint32_t thread, std::vector<const format::BlockRef*> blocks)
        : thread_(thread), blocks_(std::move(blocks)) {}

    // Moves to the next timed record; false at the end of the thread's blocks. The record before
    // stays valid until the following advance (two buffers), so a reader may look one event ahead.
    bool advance(format::TraceFile& file, std::vector<std::string>& warnings, RecordSink* sink) {
        for (;;) {
            if (cursor_) {
                format::Record& r = records_[!current_];
                while (cursor_->next(r)) {
                    if (is_timed(r.tag)) {
                        current_ = !current_;
                        return true;
                    }
                    // The recorder hands an exited thread's slot to the next new thread, which
                    // announces itself: from here on the slot's events are another thread's.
                    if (r.tag == format::Tag::Thread && ++announced_ > 1)
                        lane_ = static_cast<uint32_t>(announced_ - 1) << 16 | thread_;
                    if (sink) sink->untimed(*block_, r);
                }
                if (!cursor_->error().empty()) {
                    if (sink)
                        sink->block_error(*block_, true, cursor_->error());
                    else
                        warnings.push_back("malformed record in thread " + std::to_string(thread_) +
                                           ": " + cursor_->error());
                }
                cursor_.reset();
            }
            if (next_block_ >= blocks_.size()) return false;
            block_ = blocks_[next_block_++];
            if (!file.load(*block_, payload_)) {
                if (sink)
                    sink->block_error(*block_, false, file.error());
                else
                    warnings.push_back(file.error());
                continue;
            }
            cursor_ = format::RecordCursor::block(file.version(), payload_.data(), payload_.size(),
                                                  block_->first_ts);
        }
    }

    uint32_t thread() const { return thread_; }
    uint32_t lane() const { return lane_; }
    const format::Record& record() const { return records_[current_]; }

private:
    uint32_t thread_;
    uint32_t lane_ = thread_;
    uint64_t announced_ = 0;
    std::vector<const format::BlockRef*> blocks_;
    size_t next_block_ = 0;
    const format::BlockRef* block_ = nullptr; // the one being read
    std::vector<uint8_t> payload_;
    std::optional<format::RecordCursor> cursor_;
    format::Record records_[2];
    bool current_ = false;
};

EventStream::EventStream(LoadedTrace& trace, RecordSink* sink)
    : trace_(trace), sink_(sink), warnings_before_(trace.warnings.size()) {
    std::map<uint32_t, std::vector<const format::BlockRef*>> by_thread;
    for (const auto& b : trace.file.blocks())
        if (b.thread_index != format::kGlobalThreadIndex) by_thread[b.thread_index].push_back(&b);
    for (auto& [thread, blocks] : by_thread) {
        std::sort(blocks.begin(), blocks.end(),
                  [](const format::BlockRef* a, const format::BlockRef* b) {
                      return a->sequence < b->sequence;
                  });
        streams_.push_back(std::make_unique<ThreadStream>(thread, std::move(blocks)));
    }
    head_ts_.assign(streams_.size(), 0);
    for (size_t i = 0; i < streams_.size(); ++i)
        if (advance(i)) push(i);
}

bool EventStream::advance(size_t stream) {
    if (!streams_[stream]->advance(trace_.file, trace_.warnings, sink_)) return false;
    head_ts_[stream] = streams_[stream]->record().ts;
    return true;
}

EventStream::~EventStream() = default;

void EventStream::push(size_t stream) {
    heap_.push_back(stream);
    std::push_heap(heap_.begin(), heap_.end(), [this](size_t a, size_t b) { return less(b, a); });
}

void EventStream::sift_down() {
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

size_t EventStream::pop() {
    std::pop_heap(heap_.begin(), heap_.end(), [this](size_t a, size_t b) { return less(b, a); });
    size_t stream = heap_.back();
    heap_.pop_back();
    return stream;
}

void EventStream::settle() {
    if (delivered_ != kNoStream) {
        size_t s = delivered_;
        delivered_ = kNoStream;
        if (advance(s)) {
            // Still ahead of every other thread (always, with one thread): no heap traffic.
            if (heap_.empty() || less(s, heap_.front())) {
                ready_ = s;
            } else {
                // The heap's first is next; s takes its place (one sift instead of a push and a
                // pop: threads that take turns event by event do this for every event).
                ready_ = heap_.front();
                heap_.front() = s;
                sift_down();
            }
        }
    }
    if (ready_ == kNoStream && !heap_.empty()) ready_ = pop();
}

const Event* EventStream::next() {
    settle();
    if (ready_ == kNoStream) return nullptr;
    delivered_ = ready_;
    ready_ = kNoStream;
    event_ = {streams_[delivered_]->thread(), &streams_[delivered_]->record(),
              streams_[delivered_]->lane()};
    return &event_;
}

uint64_t EventStream::peek_ts() {
    settle();
    return ready_ == kNoStream ? ~uint64_t{0} : head_ts_[ready_];
}

} // namespace gpuleak::analyzer
