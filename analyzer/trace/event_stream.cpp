#include "trace/event_stream.h"

#include <sched.h>

#include <cstdlib>
#include <cstring>

namespace gpuleak::analyzer {

bool EventStream::merges_in_background() {
    const char* threads = std::getenv("GPULEAK_REPORT_THREADS");
    if (threads && std::strcmp(threads, "1") == 0) return false;
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return false;
    return CPU_COUNT(&cpus) >= 2;
}

EventStream::EventStream(LoadedTrace& trace, RecordSink* sink, Timed timed)
    : trace_(trace), sink_(sink), warnings_before_(trace.warnings.size()),
      merge_(trace.file, sink != nullptr, timed) {
    if (merges_in_background()) worker_ = std::thread([this] { produce(); });
}

EventStream::~EventStream() {
    if (!worker_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    emptied_.notify_one();
    worker_.join();
}

void EventStream::produce() {
    for (size_t i = 0;; ++i) {
        {
            std::unique_lock lock(mutex_);
            emptied_.wait(lock, [&] { return stop_ || i - released_ < kRing; });
            if (stop_) return;
        }
        EventChunk& chunk = ring_[i % kRing];
        chunk.clear();
        std::exception_ptr failure;
        try {
            merge_.fill(chunk);
            chunk.publish();
        } catch (...) {
            failure = std::current_exception();
            chunk.clear();
            chunk.last = true;
        }
        {
            std::lock_guard lock(mutex_);
            produced_ = i + 1;
            failure_ = failure;
        }
        filled_.notify_one();
        if (chunk.last) return;
    }
}

bool EventStream::next_chunk() {
    if (chunk_ && chunk_->last) {
        position_ = chunk_->size();
        return false;
    }
    position_ = 0;
    std::unique_lock lock(mutex_);
    if (chunk_) {
        ++released_;
        emptied_.notify_one();
    }
    filled_.wait(lock, [&] { return produced_ > released_; });
    chunk_ = &ring_[released_ % kRing];
    // The merge failed while filling this chunk (now empty and the last).
    if (failure_ && produced_ == released_ + 1) {
        std::exception_ptr failure = failure_;
        failure_ = nullptr;
        lock.unlock();
        std::rethrow_exception(failure);
    }
    return true;
}

void EventStream::block_error(const format::BlockRef& block, uint32_t thread, bool malformed,
                              const std::string& error) {
    if (sink_)
        sink_->block_error(block, malformed, error);
    else if (malformed)
        trace_.warnings.push_back("malformed record in thread " + std::to_string(thread) + ": " +
                                  error);
    else
        trace_.warnings.push_back(error);
}

const Event* EventStream::next() {
    if (!worker_.joinable()) {
        MergedEvent m;
        if (!merge_.next(direct_, m)) return nullptr;
        event_ = {m.thread, m.record, m.lane};
        return &event_;
    }
    for (;;) {
        if (!chunk_ || position_ == chunk_->size()) {
            if (!next_chunk()) return nullptr;
            continue;
        }
        const PackedEntry& e = chunk_->entry(position_++);
        switch (e.kind) {
        case PackedEntry::Kind::Timed:
            event_ = {e.thread, &chunk_->record(e, unpacked_[static_cast<uint8_t>(e.tag)]), e.lane};
            return &event_;
        case PackedEntry::Kind::Whole:
            if (is_timed(e.tag)) {
                event_ = {e.thread, &chunk_->record(e, unpacked_[0]), e.lane};
                return &event_;
            }
            [[fallthrough]];
        case PackedEntry::Kind::Untimed:
            if (sink_)
                sink_->untimed(chunk_->block(e),
                               chunk_->record(e, unpacked_[static_cast<uint8_t>(e.tag)]));
            break;
        case PackedEntry::Kind::BlockError:
            block_error(chunk_->block(e), e.thread, e.small[0] != 0, chunk_->error(e));
            break;
        }
    }
}

} // namespace gpuleak::analyzer
