#include "trace/event_stream.h"

#include <algorithm>
#include <map>
#include <queue>

namespace gpuleak::analyzer {
namespace {

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

class ThreadStream {
public:
    ThreadStream(uint32_t thread, std::vector<const format::BlockRef*> blocks)
        : thread_(thread), blocks_(std::move(blocks)) {}

    // Moves to the next timed record; false at the end of the thread's blocks.
    bool advance(format::TraceFile& file, std::vector<std::string>& warnings) {
        for (;;) {
            if (cursor_) {
                while (cursor_->next(record_))
                    if (is_timed(record_.tag)) return true;
                if (!cursor_->error().empty())
                    warnings.push_back("malformed record in thread " + std::to_string(thread_) + ": " +
                                       cursor_->error());
                cursor_.reset();
            }
            if (next_block_ >= blocks_.size()) return false;
            const format::BlockRef* b = blocks_[next_block_++];
            if (!file.load(*b, payload_)) {
                warnings.push_back(file.error());
                continue;
            }
            cursor_.emplace(payload_.data(), payload_.data() + payload_.size(), b->first_ts);
        }
    }

    uint32_t thread() const { return thread_; }
    const format::Record& record() const { return record_; }

private:
    uint32_t thread_;
    std::vector<const format::BlockRef*> blocks_;
    size_t next_block_ = 0;
    std::vector<uint8_t> payload_;
    std::optional<format::RecordCursor> cursor_;
    format::Record record_;
};

} // namespace

bool for_each_event(LoadedTrace& trace, const std::function<void(const Event&)>& on_event) {
    std::map<uint32_t, std::vector<const format::BlockRef*>> by_thread;
    for (const auto& b : trace.file.blocks())
        if (b.thread_index != format::kGlobalThreadIndex) by_thread[b.thread_index].push_back(&b);
    std::vector<std::unique_ptr<ThreadStream>> streams;
    for (auto& [thread, blocks] : by_thread) {
        std::sort(blocks.begin(), blocks.end(),
                  [](const format::BlockRef* a, const format::BlockRef* b) { return a->sequence < b->sequence; });
        streams.push_back(std::make_unique<ThreadStream>(thread, std::move(blocks)));
    }
    using Head = std::pair<uint64_t, size_t>; // (ts, stream index)
    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
    size_t before = trace.warnings.size();
    for (size_t i = 0; i < streams.size(); ++i)
        if (streams[i]->advance(trace.file, trace.warnings)) heads.push({streams[i]->record().ts, i});
    while (!heads.empty()) {
        size_t i = heads.top().second;
        heads.pop();
        on_event({streams[i]->thread(), &streams[i]->record()});
        if (streams[i]->advance(trace.file, trace.warnings)) heads.push({streams[i]->record().ts, i});
    }
    return trace.warnings.size() == before;
}

} // namespace gpuleak::analyzer
