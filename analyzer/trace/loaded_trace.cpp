#include "trace/loaded_trace.h"

#include "trace/event_stream.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace gpuleak::analyzer {
namespace {

// Dense tables stay proportionate to a sane trace; a damaged one cannot make them huge.
constexpr uint32_t kMaxDenseThreads = 1 << 16;
constexpr uint64_t kDenseSkip =
    1 << 16; // how far past the last id a new one may land and stay dense

struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
        return std::hash<uint64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
    }
};

// Pass 1's allocation counts of the thread being read (blocks come thread by thread).
class ThreadAllocations {
public:
    explicit ThreadAllocations(std::vector<StackAllocations>& out) : out_(out) {}

    void start_thread(uint32_t thread) {
        thread_ = thread;
        ordinal_ = 0;
        index_.clear();
        last_ = kNone;
    }
    // Every timed record of the thread, in order.
    void timed(const format::Record& r) {
        uint64_t ordinal = ordinal_++;
        if (r.tag != format::Tag::Alloc) return;
        // A loop allocating from one stack over and over meets the same entry again.
        if (last_ == kNone || out_[last_].stack != r.stack || out_[last_].py_stack != r.py_stack) {
            auto [it, fresh] = index_.try_emplace({r.stack, r.py_stack}, out_.size());
            if (fresh) out_.push_back({thread_, r.stack, r.py_stack, 0, r.ts, ordinal});
            last_ = it->second;
        }
        out_[last_].count += 1;
    }

private:
    static constexpr size_t kNone = ~size_t{0};
    std::vector<StackAllocations>& out_;
    uint32_t thread_ = 0;
    uint64_t ordinal_ = 0;
    std::unordered_map<std::pair<uint64_t, uint64_t>, size_t, PairHash> index_;
    size_t last_ = kNone;
};

} // namespace

void LocalIds::set(uint32_t thread, uint64_t local, uint32_t global) {
    ++defined_;
    if (thread < kMaxDenseThreads) {
        if (thread >= dense_.size()) dense_.resize(thread + 1);
        std::vector<uint32_t>& ids = dense_[thread];
        // The recorder numbers ids 1, 2, 3...: dense slots stay proportionate to the ids defined.
        // Ids that keep skipping ahead (a damaged or hostile file) go to the sparse map instead.
        uint64_t grow = local >= ids.size() ? local + 1 - ids.size() : 0;
        if (local < ids.size() + kDenseSkip && dense_slots_ + grow <= 4 * defined_ + kDenseSkip) {
            if (grow) ids.resize(local + 1, 0);
            dense_slots_ += grow;
            ids[local] = global;
            return;
        }
    }
    sparse_[key(thread, local)] = global;
}

std::string ProcessInfo::command() const {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += a;
    }
    return out.empty() ? exe : out;
}

std::string ProcessInfo::env_value(const std::string& name) const {
    for (const auto& e : env)
        if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
            return e.substr(name.size() + 1);
    return {};
}

namespace {

// A thread's blocks are numbered 0, 1, 2, ... as they are sealed; a hole means a block was never
// written, so the counts of this report are short by its events. (A missing tail cannot be told
// from a thread that recorded nothing more.)
void warn_about_missing_blocks(LoadedTrace& t, const std::vector<size_t>& order) {
    const auto& blocks = t.file.blocks();
    uint64_t missing = 0, threads = 0;
    for (size_t i = 0; i < order.size();) {
        const uint32_t thread = blocks[order[i]].thread_index;
        uint64_t expected = 0, thread_missing = 0;
        for (; i < order.size() && blocks[order[i]].thread_index == thread; ++i) {
            const uint64_t sequence = blocks[order[i]].sequence;
            if (thread == format::kGlobalThreadIndex && sequence == format::kCappedSequence)
                continue;
            if (sequence > expected) thread_missing += sequence - expected;
            if (sequence >= expected) expected = sequence + 1;
        }
        missing += thread_missing;
        threads += thread_missing != 0;
    }
    if (missing)
        t.warnings.push_back(std::to_string(missing) + " block(s) of " + std::to_string(threads) +
                             " thread(s) are missing from the trace (never written: the process "
                             "ended while they were being written, or the file was edited); their "
                             "events are not in this report");
}

} // namespace

namespace {
bool read_definitions(LoadedTrace& t, std::string& error);
} // namespace

bool load_trace(const std::string& path, LoadedTrace& t, std::string& error) {
    t.path = path;
    if (!t.file.open(path)) {
        error = t.file.error();
        return false;
    }
    return read_definitions(t, error);
}

bool load_trace(const std::string& name, std::vector<uint8_t> bytes, LoadedTrace& t,
                std::string& error) {
    t.path = name;
    if (!t.file.open_memory(std::move(bytes))) {
        error = t.file.error();
        return false;
    }
    return read_definitions(t, error);
}

namespace {

bool read_definitions(LoadedTrace& t, std::string& error) {
    t.file.index_blocks();
    if (!t.file.damage().empty())
        t.warnings.push_back("trace is damaged or was cut short (" + t.file.damage() +
                             "); reporting the readable part");
    // Per thread in sequence order: a node's parent is always defined before it in its own thread.
    std::vector<size_t> order(t.file.blocks().size());
    std::iota(order.begin(), order.end(), 0);
    const auto& blocks = t.file.blocks();
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::tie(blocks[a].thread_index, blocks[a].sequence) <
               std::tie(blocks[b].thread_index, blocks[b].sequence);
    });
    warn_about_missing_blocks(t, order);
    std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, PairHash> native_edges, py_edges;
    std::vector<uint8_t> payload;
    format::Record r;
    ThreadAllocations allocations(t.alloc_stacks);
    uint32_t current_thread = format::kGlobalThreadIndex;
    for (size_t index : order) {
        const format::BlockRef& b = blocks[index];
        // Pass 2 merges the recording threads' timed records; thread 0's are not events.
        bool events = b.thread_index != format::kGlobalThreadIndex;
        if (events && b.thread_index != current_thread)
            allocations.start_thread(current_thread = b.thread_index);
        if (!t.file.load(b, payload)) {
            t.warnings.push_back(t.file.error());
            continue;
        }
        format::RecordCursor cursor(payload.data(), payload.data() + payload.size(), b.first_ts);
        while (cursor.next(r)) {
            if (events && is_timed(r.tag)) {
                allocations.timed(r);
                if (r.tag == format::Tag::Marker) t.markers.push_back({r.ts, r.text});
                continue;
            }
            switch (r.tag) {
            case format::Tag::Process:
                if (!t.have_process) {
                    t.process = {r.pid, r.ppid, r.start_unix_ns, r.text, r.strings, r.strings2};
                    t.have_process = true;
                }
                break;
            case format::Tag::Module:
                t.modules.push_back({r.text, r.address, r.blob, r.segments});
                break;
            case format::Tag::StackNode: {
                uint32_t parent = t.native_node(b.thread_index, r.parent);
                auto [it, fresh] = native_edges.try_emplace({parent, r.ip}, 0);
                if (fresh) {
                    it->second = static_cast<uint32_t>(t.native_nodes.size());
                    t.native_nodes.push_back({parent, r.ip});
                }
                t.native_local.set(b.thread_index, r.id, it->second);
                break;
            }
            case format::Tag::PyCode:
                t.py_code[r.ip] = {r.text, r.text2, static_cast<int>(r.line_or_offset), r.blob};
                break;
            case format::Tag::PyStackNode: {
                uint32_t parent = t.py_node(b.thread_index, r.parent);
                uint64_t key = r.ip << 33 |
                               static_cast<uint64_t>(static_cast<uint32_t>(r.line_or_offset)) << 1 |
                               (r.is_entry ? 1 : 0);
                auto [it, fresh] = py_edges.try_emplace({parent, key}, 0);
                if (fresh) {
                    it->second = static_cast<uint32_t>(t.py_nodes.size());
                    t.py_nodes.push_back(
                        {parent, r.ip, static_cast<int32_t>(r.line_or_offset), r.is_entry});
                }
                t.py_local.set(b.thread_index, r.id, it->second);
                break;
            }
            case format::Tag::PyInfo:
                t.py_version_hex = static_cast<uint32_t>(r.count);
                break;
            case format::Tag::TraceEnd:
                t.clean_end = true;
                break;
            case format::Tag::Capped:
                t.warnings.push_back(
                    "trace capped at " + std::to_string(r.count) +
                    " bytes (GPULEAK_MAX_BYTES or the file size limit): later events "
                    "were not recorded");
                break;
            default:
                break;
            }
        }
        if (!cursor.error().empty())
            t.warnings.push_back("malformed record in block at offset " + std::to_string(b.offset) +
                                 ": " + cursor.error());
    }
    // Pass 2 meets markers in time order (each thread's records are in time order).
    std::stable_sort(t.markers.begin(), t.markers.end(),
                     [](const auto& a, const auto& b) { return a.ts < b.ts; });
    if (!t.have_process && blocks.empty()) {
        error = "trace holds no data (the process may have been killed before its first flush)";
        return false;
    }
    return true;
}

} // namespace

} // namespace gpuleak::analyzer
