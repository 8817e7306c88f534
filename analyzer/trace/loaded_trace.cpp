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

void LoadedTrace::add_marker(uint64_t ts, const std::string& name) {
    marker_count += 1;
    auto [it, fresh] = marker_names.try_emplace(name, static_cast<uint32_t>(markers.size()));
    if (fresh) markers.push_back({name, {}});
    markers[it->second].ts.push_back(ts);
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
bool read_definitions(LoadedTrace& t, std::string& error, TraceListener* listener);
} // namespace

bool load_trace(const std::string& path, LoadedTrace& t, std::string& error,
                TraceListener* listener) {
    t.path = path;
    if (!t.file.open(path)) {
        error = t.file.error();
        return false;
    }
    return read_definitions(t, error, listener);
}

bool load_trace(const std::string& name, std::vector<uint8_t> bytes, LoadedTrace& t,
                std::string& error) {
    t.path = name;
    if (!t.file.open_memory(std::move(bytes))) {
        error = t.file.error();
        return false;
    }
    return read_definitions(t, error, nullptr);
}

namespace {

// Pass 1's handling of the records that are not events. A record of the process-wide stream, or
// of a thread read thread by thread, takes effect at once (`in_order`). Read in the time-ordered
// merge, records whose effect depends on their order across threads (the first process record,
// the last Python version or code object, modules and warnings in the order of their threads) are
// applied as reading thread by thread, in the order of the threads and their blocks, would apply
// them, so that the trace read either way is the same.
class Definitions : public RecordSink {
public:
    explicit Definitions(LoadedTrace& t) : t_(t) {}

    void define(const format::BlockRef& b, const format::Record& r, bool in_order) {
        const uint32_t thread = b.thread_index;
        switch (r.tag) {
        case format::Tag::Process:
            // The first in thread order: the process-wide stream's, else the lowest thread's.
            if (!t_.have_process || (!in_order && thread < process_thread_)) {
                t_.process = {r.pid, r.ppid, r.start_unix_ns, r.text, r.strings, r.strings2};
                t_.have_process = true;
                process_thread_ = thread;
            }
            break;
        case format::Tag::Module:
            if (in_order) {
                t_.modules.push_back({r.text, r.address, r.blob, r.segments});
            } else {
                t_.late_definitions = true;
                later_.push_back({thread, {}, {r.text, r.address, r.blob, r.segments}});
            }
            break;
        case format::Tag::StackNode: {
            uint32_t parent = t_.native_node(thread, r.parent);
            auto [it, fresh] = native_edges_.try_emplace({parent, r.ip}, 0);
            if (fresh) {
                it->second = static_cast<uint32_t>(t_.native_nodes.size());
                t_.native_nodes.push_back({parent, r.ip});
            }
            if (uint32_t before = t_.native_node(thread, r.id); before && before != it->second)
                t_.late_definitions = true;
            t_.native_local.set(thread, r.id, it->second);
            break;
        }
        case format::Tag::PyCode: {
            PyCode code{r.text, r.text2, static_cast<int>(r.line_or_offset), r.blob};
            auto [it, added] = t_.py_code.try_emplace(r.ip);
            if (!added &&
                (it->second.filename != code.filename || it->second.qualname != code.qualname ||
                 it->second.firstlineno != code.firstlineno ||
                 it->second.linetable != code.linetable))
                t_.late_definitions = true;
            // The last in thread order.
            auto [from, fresh] = py_code_thread_.try_emplace(r.ip, thread);
            if (!fresh && !in_order && thread < from->second) break;
            from->second = thread;
            it->second = std::move(code);
            break;
        }
        case format::Tag::PyStackNode: {
            uint32_t parent = t_.py_node(thread, r.parent);
            uint64_t key = r.ip << 33 |
                           static_cast<uint64_t>(static_cast<uint32_t>(r.line_or_offset)) << 1 |
                           (r.is_entry ? 1 : 0);
            auto [it, fresh] = py_edges_.try_emplace({parent, key}, 0);
            if (fresh) {
                it->second = static_cast<uint32_t>(t_.py_nodes.size());
                t_.py_nodes.push_back(
                    {parent, r.ip, static_cast<int32_t>(r.line_or_offset), r.is_entry});
            }
            if (uint32_t before = t_.py_node(thread, r.id); before && before != it->second)
                t_.late_definitions = true;
            t_.py_local.set(thread, r.id, it->second);
            break;
        }
        case format::Tag::PyInfo:
            // The last in thread order.
            if (!in_order) {
                t_.late_definitions = true;
                if (have_py_info_ && thread < py_info_thread_) break;
            }
            t_.py_version_hex = static_cast<uint32_t>(r.count);
            have_py_info_ = true;
            py_info_thread_ = thread;
            break;
        case format::Tag::TraceEnd:
            t_.clean_end = true;
            t_.exit_ts = r.ts;
            break;
        case format::Tag::Capped:
            warn(thread, in_order,
                 "trace capped at " + std::to_string(r.count) +
                     " bytes (GPULEAK_MAX_BYTES or the file size limit): later events were not "
                     "recorded");
            break;
        default:
            break;
        }
    }

    void block_error(const format::BlockRef& b, bool malformed, const std::string& error,
                     bool in_order) {
        if (b.thread_index != format::kGlobalThreadIndex) t_.late_definitions = true;
        warn(b.thread_index, in_order,
             malformed
                 ? "malformed record in block at offset " + std::to_string(b.offset) + ": " + error
                 : error);
    }

    // The merge's records.
    void untimed(const format::BlockRef& b, const format::Record& r) override {
        define(b, r, false);
    }
    void block_error(const format::BlockRef& b, bool malformed, const std::string& error) override {
        block_error(b, malformed, error, false);
    }

    // After the merge: its modules and warnings, in thread order.
    void finish() {
        std::stable_sort(later_.begin(), later_.end(),
                         [](const Later& a, const Later& b) { return a.thread < b.thread; });
        for (Later& l : later_) {
            if (l.warning.empty())
                t_.modules.push_back(std::move(l.module));
            else
                t_.warnings.push_back(std::move(l.warning));
        }
        later_.clear();
    }

private:
    struct Later {
        uint32_t thread;
        std::string warning; // empty: a module
        ModuleInfo module;
    };
    void warn(uint32_t thread, bool in_order, std::string warning) {
        if (in_order)
            t_.warnings.push_back(std::move(warning));
        else
            later_.push_back({thread, std::move(warning), {}});
    }

    LoadedTrace& t_;
    std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, PairHash> native_edges_, py_edges_;
    uint32_t process_thread_ = 0;
    std::unordered_map<uint64_t, uint32_t> py_code_thread_;
    bool have_py_info_ = false;
    uint32_t py_info_thread_ = 0;
    std::vector<Later> later_;
};

// A marker with its place in thread order, which breaks ties in time.
bool read_definitions(LoadedTrace& t, std::string& error, TraceListener* listener) {
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
    // A thread with two blocks of one sequence number is read in the order of the file, which the
    // merge does not promise: such a trace is read thread by thread.
    bool repeated_sequence = false;
    for (size_t i = 1; i < order.size(); ++i)
        repeated_sequence |= blocks[order[i]].thread_index != format::kGlobalThreadIndex &&
                             blocks[order[i]].thread_index == blocks[order[i - 1]].thread_index &&
                             blocks[order[i]].sequence == blocks[order[i - 1]].sequence;
    Definitions definitions(t);
    std::vector<uint8_t> payload;
    format::Record r;
    for (size_t index : order) {
        const format::BlockRef& b = blocks[index];
        // Pass 2 merges the recording threads' timed records; thread 0's are not events.
        bool events = b.thread_index != format::kGlobalThreadIndex;
        if (events && !repeated_sequence) break; // the threads come last, merged below
        if (!t.file.load(b, payload)) {
            definitions.block_error(b, false, t.file.error(), true);
            continue;
        }
        auto cursor = format::RecordCursor::block(t.file.version(), payload.data(), payload.size(),
                                                  b.first_ts);
        while (cursor.next(r)) {
            if (events && is_timed(r.tag)) {
                if (r.tag == format::Tag::Marker) t.add_marker(r.ts, r.text);
                continue;
            }
            definitions.define(b, r, true);
        }
        if (!cursor.error().empty()) definitions.block_error(b, true, cursor.error(), true);
    }
    if (repeated_sequence) {
        t.late_definitions = true;
        // Read thread by thread, a name's markers are not in time order, as the merge gives them.
        for (LoadedTrace::MarkerSeries& m : t.markers) {
            std::vector<uint64_t> times = m.ts.take();
            std::sort(times.begin(), times.end());
            for (uint64_t ts : times)
                m.ts.push_back(ts);
        }
    } else {
        if (listener) listener->on_globals(t);
        EventStream stream(t, &definitions, Timed::AllocationsAndMarkers);
        while (const Event* e = stream.next()) {
            if (e->record->tag == format::Tag::Marker) t.add_marker(e->record->ts, e->record->text);
            if (listener) listener->on_event(*e);
        }
        if (listener) listener->on_passed_over(stream.passed_over());
        definitions.finish();
    }
    if (!t.have_process && blocks.empty()) {
        error = "trace holds no data (the process may have been killed before its first flush)";
        return false;
    }
    return true;
}

} // namespace

} // namespace gpuleak::analyzer
