#include "gpuleak/format/trace_builder.h"

#include <fstream>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace gpuleak::format {
namespace {

struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
        return std::hash<uint64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
    }
};

[[noreturn]] void misuse(const std::string& what) {
    throw std::invalid_argument("TraceBuilder: " + what);
}

} // namespace

// One recording thread: its open block, its block numbers and its two stack tries.
struct TraceBuilder::Stream {
    uint32_t index = 0;
    std::vector<uint8_t> block;
    size_t used = 0;   // bytes of records at the start of `block`
    size_t column = 0; // bytes of time column below its top
    uint8_t* column_top() { return block.data() + block.size() - kTimeTrailerBytes; }
    bool has_ts = false;
    uint64_t first_ts = 0, last_ts = 0; // of the open block
    uint64_t thread_ts = 0;             // the thread's latest event
    uint64_t sequence = 0;
    std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, PairHash> native, python;
    uint64_t next_native = 1, next_python = 1;
};

TraceBuilder::TraceBuilder(const BuilderOptions& options)
    : own_sink_(std::make_unique<MemorySink>()), sink_(*own_sink_), options_(options),
      writer_(sink_, {options.compress, 0, nullptr}) {
    if (options_.block_bytes == 0 || options_.block_bytes > kMaxBlockPayload)
        misuse("block_bytes must be 1.." + std::to_string(kMaxBlockPayload));
    check(writer_.start());
}

TraceBuilder::TraceBuilder(Sink& sink, const BuilderOptions& options)
    : sink_(sink), options_(options), writer_(sink_, {options.compress, 0, nullptr}) {
    if (options_.block_bytes == 0 || options_.block_bytes > kMaxBlockPayload)
        misuse("block_bytes must be 1.." + std::to_string(kMaxBlockPayload));
    check(writer_.start());
}

TraceBuilder::~TraceBuilder() = default;

void TraceBuilder::check(const WriteStatus& status) {
    if (status.kind == WriteStatus::Written) return;
    throw std::runtime_error("TraceBuilder: the sink refused a block (" +
                             std::string(status.kind == WriteStatus::Failed
                                             ? "error " + std::to_string(status.error)
                                             : "trace stopped") +
                             ")");
}

// --- process-wide records ------------------------------------------------------------------------

void TraceBuilder::global_block(uint64_t ts, size_t need, const std::function<void(Encoder&)>& fill,
                                BlockRole role, std::optional<uint64_t> sequence) {
    if (need + kTimeTrailerBytes > kMaxBlockPayload)
        misuse("a process-wide record larger than a block");
    std::vector<uint8_t> payload(need + kTimeTrailerBytes);
    uint8_t* column_top = payload.data() + need;
    Encoder e(payload.data(), column_top);
    fill(e);
    uint32_t size = pack_block(payload.data(), static_cast<uint32_t>(e.position() - payload.data()),
                               column_top, static_cast<uint32_t>(column_top - e.column()));
    if (!sequence) sequence = global_sequence_++;
    check(writer_.write_block({kGlobalThreadIndex, *sequence, ts, ts}, payload.data(), size, role));
}

void TraceBuilder::process(const ProcessDesc& p) {
    size_t need = kMaxFixedRecord + p.exe.size() + p.tool_version.size();
    for (const auto& a : p.argv)
        need += kMaxVarintBytes + a.size();
    for (const auto& v : p.env)
        need += kMaxVarintBytes + v.size();
    global_block(0, need, [&](Encoder& e) {
        put::process(e, p.pid, p.ppid, p.start_unix_ns, p.exe, p.argv, p.env, p.tool_version);
    });
}

void TraceBuilder::module(const ModuleDesc& m, uint64_t ts) {
    size_t need = kMaxFixedRecord + m.path.size() + m.build_id.size() +
                  2 * kMaxVarintBytes * m.segments.size();
    global_block(ts, need,
                 [&](Encoder& e) { put::module(e, 0, m.base, m.path, m.build_id, m.segments); });
}

void TraceBuilder::py_info(uint32_t version_hex, bool debug_offsets) {
    global_block(0, kMaxFixedRecord,
                 [&](Encoder& e) { put::py_info(e, version_hex, debug_offsets ? 1 : 0); });
}

void TraceBuilder::end(uint64_t ts) {
    finish();
    global_block(
        ts, kMaxFixedRecord, [](Encoder& e) { put::trace_end(e, 0); }, BlockRole::Closing);
}

void TraceBuilder::capped(uint64_t ts, uint64_t bytes_written) {
    global_block(
        ts, kMaxFixedRecord, [&](Encoder& e) { put::capped(e, 0, bytes_written); },
        BlockRole::Events, kCappedSequence);
}

// --- threads -------------------------------------------------------------------------------------

ThreadRef TraceBuilder::thread(uint64_t tid, std::string_view name, uint32_t index) {
    if (index == 0) {
        while (streams_.count(next_index_))
            ++next_index_;
        index = next_index_++;
    }
    if (index == kGlobalThreadIndex) misuse("thread index 0 is the process-wide stream");
    if (streams_.count(index)) misuse("thread index " + std::to_string(index) + " used twice");
    auto s = std::make_unique<Stream>();
    s->index = index;
    s->block.resize(options_.block_bytes);
    Stream& ref = *s;
    streams_.emplace(index, std::move(s));
    Encoder e = open(ref, kMaxFixedRecord + name.size());
    put::thread(e, tid, name);
    close(ref, e);
    return {index};
}

void TraceBuilder::reuse(ThreadRef slot, uint64_t tid, std::string_view name) {
    Stream& s = stream(slot);
    Encoder e = open(s, kMaxFixedRecord + name.size());
    put::thread(e, tid, name);
    close(s, e);
}

TraceBuilder::Stream& TraceBuilder::stream(ThreadRef t) {
    auto it = streams_.find(t.index);
    if (it == streams_.end()) misuse("thread index " + std::to_string(t.index) + " unknown");
    return *it->second;
}

Encoder TraceBuilder::open(Stream& s, size_t need) {
    if (need + kTimeTrailerBytes > options_.block_bytes) misuse("a record larger than block_bytes");
    if (s.used + s.column + need + kTimeTrailerBytes > options_.block_bytes) seal(s);
    return Encoder(s.block.data() + s.used, s.column_top() - s.column);
}

void TraceBuilder::close(Stream& s, const Encoder& e) {
    s.used = static_cast<size_t>(e.position() - s.block.data());
    s.column = static_cast<size_t>(s.column_top() - e.column());
}

uint64_t TraceBuilder::delta(Stream& s, uint64_t ts) {
    if (ts < s.thread_ts)
        misuse("thread " + std::to_string(s.index) + ": time " + std::to_string(ts) +
               " comes before its previous event at " + std::to_string(s.thread_ts));
    s.thread_ts = ts;
    if (!s.has_ts) {
        s.has_ts = true;
        s.first_ts = s.last_ts = ts;
        return 0;
    }
    uint64_t dt = ts - s.last_ts;
    s.last_ts = ts;
    return dt;
}

void TraceBuilder::seal(Stream& s) {
    if (s.used == 0) return;
    BlockMeta meta{s.index, s.sequence++, s.has_ts ? s.first_ts : 0, s.has_ts ? s.last_ts : 0};
    uint32_t size = pack_block(s.block.data(), static_cast<uint32_t>(s.used), s.column_top(),
                               static_cast<uint32_t>(s.column));
    check(writer_.write_block(meta, s.block.data(), size));
    s.used = s.column = 0;
    s.has_ts = false;
}

void TraceBuilder::end_block(ThreadRef t) {
    seal(stream(t));
}

void TraceBuilder::skip_blocks(ThreadRef t, uint64_t n) {
    Stream& s = stream(t);
    seal(s);
    s.sequence += n;
}

// --- stacks --------------------------------------------------------------------------------------

void TraceBuilder::stack_node(ThreadRef t, uint64_t id, uint64_t parent, uint64_t ip) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::stack_node(e, id, parent, ip);
    close(s, e);
}

void TraceBuilder::py_stack_node(ThreadRef t, uint64_t id, uint64_t parent, uint64_t code_id,
                                 int32_t byte_offset, bool is_entry) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::py_stack_node(e, id, parent, code_id, byte_offset, is_entry);
    close(s, e);
}

uint64_t TraceBuilder::stack(ThreadRef t, const std::vector<uint64_t>& ips) {
    Stream& s = stream(t);
    uint64_t node = 0;
    for (auto ip = ips.rbegin(); ip != ips.rend(); ++ip) { // from the outermost frame
        auto [it, fresh] = s.native.try_emplace({node, *ip}, s.next_native);
        if (fresh) {
            ++s.next_native;
            stack_node(t, it->second, node, *ip);
        }
        node = it->second;
    }
    return node;
}

uint64_t TraceBuilder::py_code(ThreadRef t, std::string_view filename, std::string_view qualname,
                               int firstlineno, const std::vector<uint8_t>& line_table) {
    Stream& s = stream(t);
    uint64_t id = next_code_id_++;
    Encoder e = open(s, kMaxFixedRecord + filename.size() + qualname.size() + line_table.size());
    put::py_code(e, id, filename, qualname, firstlineno, line_table.data(), line_table.size());
    close(s, e);
    return id;
}

uint64_t TraceBuilder::py_stack(ThreadRef t, const std::vector<PyFrameDesc>& frames) {
    Stream& s = stream(t);
    uint64_t node = 0;
    for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
        // The recorder's trie key: code id, byte offset and entry flag in one word.
        uint64_t key = f->code_id << 33 |
                       static_cast<uint64_t>(static_cast<uint32_t>(f->byte_offset)) << 1 |
                       (f->is_entry ? 1 : 0);
        auto [it, fresh] = s.python.try_emplace({node, key}, s.next_python);
        if (fresh) {
            ++s.next_python;
            py_stack_node(t, it->second, node, f->code_id, f->byte_offset, f->is_entry);
        }
        node = it->second;
    }
    return node;
}

// --- events --------------------------------------------------------------------------------------

void TraceBuilder::alloc(ThreadRef t, uint64_t ts, uint64_t address, uint64_t size, uint64_t stack,
                         const AllocExtra& x) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::alloc(e, delta(s, ts), x.api, x.kind, x.device, address, size, stack, x.py_stack);
    close(s, e);
}

void TraceBuilder::free(ThreadRef t, uint64_t ts, uint64_t address, const FreeExtra& x) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::free(e, delta(s, ts), x.api, x.space, address, x.result);
    close(s, e);
}

void TraceBuilder::alloc_failed(ThreadRef t, uint64_t ts, uint64_t size, uint64_t stack,
                                const FailedExtra& x) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::alloc_failed(e, delta(s, ts), x.api, x.kind, x.device, size, x.result, stack, x.py_stack,
                      x.free_bytes ? *x.free_bytes + 1 : 0, x.total_bytes ? *x.total_bytes + 1 : 0);
    close(s, e);
}

void TraceBuilder::vmm_create(ThreadRef t, uint64_t ts, uint64_t handle, uint64_t size,
                              uint64_t stack, int64_t device) {
    alloc(t, ts, handle, size, stack, {Api::cuMemCreate, MemKind::Device, device, 0});
}

void TraceBuilder::vmm_retain(ThreadRef t, uint64_t ts, uint64_t handle, uint64_t address) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::vmm_retain(e, delta(s, ts), handle, address);
    close(s, e);
}

void TraceBuilder::vmm_release(ThreadRef t, uint64_t ts, uint64_t handle) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::vmm_release(e, delta(s, ts), handle);
    close(s, e);
}

void TraceBuilder::vmm_map(ThreadRef t, uint64_t ts, uint64_t address, uint64_t size,
                           uint64_t offset, uint64_t handle) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::vmm_map(e, delta(s, ts), address, size, offset, handle);
    close(s, e);
}

void TraceBuilder::vmm_unmap(ThreadRef t, uint64_t ts, uint64_t address, uint64_t size) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord);
    put::vmm_unmap(e, delta(s, ts), address, size);
    close(s, e);
}

void TraceBuilder::marker(ThreadRef t, uint64_t ts, std::string_view name) {
    Stream& s = stream(t);
    Encoder e = open(s, kMaxFixedRecord + name.size());
    put::marker(e, delta(s, ts), name);
    close(s, e);
}

// --- output --------------------------------------------------------------------------------------

void TraceBuilder::finish() {
    for (auto& [index, s] : streams_)
        seal(*s);
}

const std::vector<uint8_t>& TraceBuilder::bytes() {
    if (!own_sink_) misuse("bytes() of a builder writing into a sink of its caller");
    finish();
    return own_sink_->bytes();
}

void TraceBuilder::write(const std::string& path) {
    const std::vector<uint8_t>& b = bytes();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    if (!f.flush()) throw std::runtime_error("TraceBuilder: cannot write " + path);
}

} // namespace gpuleak::format
