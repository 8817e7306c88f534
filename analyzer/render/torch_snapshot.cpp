// PyTorch's memory snapshot (torch.cuda.memory._snapshot(), the file memory_viz opens), from the
// allocation log: each live device allocation at the end is a segment holding one active block;
// the history is per device: an allocation is segment_alloc + alloc, a free free_requested +
// free_completed + segment_free, a failed allocation oom. Times are microseconds since the trace
// started.
//
// Pickle protocol 2, with only the opcodes memory_viz's own JavaScript unpickler reads (PROTO,
// EMPTY_DICT, EMPTY_LIST, MARK, SETITEMS, APPENDS, BINUNICODE, BININT1, BININT2, BININT, LONG1,
// NEWTRUE, NEWFALSE, NONE, TUPLE2, BINPUT, LONG_BINPUT, BINGET, LONG_BINGET, STOP). Every frame
// list is written once and referenced from the memo afterwards, as are the dictionaries' keys.
#include <map>
#include <unordered_map>

#include "render/exports.h"

namespace gpuleak::analyzer {
namespace {

class Pickler {
public:
    explicit Pickler(std::ostream& out) : out_(out) {
        op(0x80);
        op(2); // PROTO 2
    }
    void finish() {
        op('.'); // STOP
        flush();
    }
    void op(uint8_t c) {
        buf_ += static_cast<char>(c);
        if (buf_.size() > (1 << 20)) flush();
    }
    void u32(uint32_t v) {
        for (int i = 0; i < 4; ++i)
            op(static_cast<uint8_t>(v >> (8 * i)));
    }
    void integer(int64_t v) {
        if (v >= 0 && v < 256) {
            op('K');
            op(static_cast<uint8_t>(v));
        } else if (v >= 0 && v < 65536) {
            op('M');
            op(static_cast<uint8_t>(v));
            op(static_cast<uint8_t>(v >> 8));
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            op('J');
            u32(static_cast<uint32_t>(static_cast<int32_t>(v)));
        } else {
            long1(static_cast<uint64_t>(v), v < 0);
        }
    }
    void unsigned_integer(uint64_t v) {
        if (v <= static_cast<uint64_t>(INT64_MAX))
            integer(static_cast<int64_t>(v));
        else
            long1(v, false);
    }
    void string(const std::string& s) {
        op('X'); // BINUNICODE
        u32(static_cast<uint32_t>(s.size()));
        for (char c : s)
            op(static_cast<uint8_t>(c));
    }
    // A string used again and again (dictionary keys, file names): the memo's copy after the first.
    void interned(const std::string& s) {
        auto it = strings_.find(s);
        if (it != strings_.end()) {
            get(it->second);
            return;
        }
        string(s);
        strings_[s] = put();
    }
    void boolean(bool b) { op(b ? 0x88 : 0x89); }
    void none() { op('N'); }
    void empty_dict() { op('}'); }
    void empty_list() { op(']'); }
    void mark() { op('('); }
    void setitems() { op('u'); }
    void appends() { op('e'); }
    void tuple2() { op(0x86); }
    uint32_t put() {
        uint32_t id = next_memo_++;
        if (id < 256) {
            op('q');
            op(static_cast<uint8_t>(id));
        } else {
            op('r');
            u32(id);
        }
        return id;
    }
    void get(uint32_t id) {
        if (id < 256) {
            op('h');
            op(static_cast<uint8_t>(id));
        } else {
            op('j');
            u32(id);
        }
    }

private:
    // Little-endian two's complement: as few bytes as a non-negative value needs (plus a zero
    // byte when its top bit is set); a negative value in all 8.
    void long1(uint64_t v, bool negative) {
        uint8_t bytes[9];
        int n = 0;
        do {
            bytes[n++] = static_cast<uint8_t>(v);
            v >>= 8;
        } while (n < 8 && (negative || v));
        if (!negative && (bytes[n - 1] & 0x80)) bytes[n++] = 0;
        op(0x8a);
        op(static_cast<uint8_t>(n));
        for (int i = 0; i < n; ++i)
            op(bytes[i]);
    }
    void flush() {
        out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
    }

    std::ostream& out_;
    std::string buf_;
    uint32_t next_memo_ = 0;
    std::unordered_map<std::string, uint32_t> strings_;
};

class SnapshotWriter {
public:
    SnapshotWriter(const Report& r, std::ostream& out) : r_(r), p_(out) {}

    // A dictionary: {key: value, ...} written by `items`, which calls key() before each value.
    template <typename Items> void dict(Items&& items) {
        p_.empty_dict();
        p_.mark();
        items();
        p_.setitems();
    }
    void key(const char* k) { p_.interned(k); }

    void frames(uint32_t site) {
        auto it = frame_memo_.find(site);
        if (it != frame_memo_.end()) {
            p_.get(it->second);
            return;
        }
        p_.empty_list();
        const auto& frames = access::frames(r_, site);
        if (!frames.empty()) {
            p_.mark();
            for (const Frame& f : frames)
                dict([&] {
                    key("filename");
                    p_.interned(f.file.empty() ? (f.module.empty() ? "??" : f.module) : f.file);
                    key("line");
                    p_.integer(f.line);
                    key("name");
                    p_.interned(f.function.empty() ? "??" : f.function);
                });
            p_.appends();
        }
        frame_memo_[site] = p_.put();
    }

    void entry(const char* action, uint64_t addr, uint64_t size, uint64_t ts_ns, uint32_t site,
               bool oom = false) {
        dict([&] {
            key("action");
            p_.interned(action);
            key(oom ? "device_free" : "addr");
            p_.unsigned_integer(addr);
            key("size");
            p_.unsigned_integer(size);
            key("stream");
            p_.integer(0);
            key("time_us");
            p_.unsigned_integer(ts_ns / 1000);
            key("frames");
            frames(site);
        });
    }

    void write(const AllocationLog& log) {
        std::vector<AllocationLog::Live> live = log.live();
        int devices = 1;
        for (const auto& l : live)
            devices = std::max(devices, l.device + 1);
        for (const auto& rec : log.records())
            devices = std::max(devices, rec.device + 1);
        auto device_of = [](int16_t d) { return d < 0 ? 0 : d; };
        dict([&] {
            key("segments");
            p_.empty_list();
            if (!live.empty()) {
                p_.mark();
                for (const auto& l : live)
                    dict([&] {
                        key("device");
                        p_.integer(device_of(l.device));
                        key("address");
                        p_.unsigned_integer(l.address);
                        for (const char* k :
                             {"total_size", "allocated_size", "active_size", "requested_size"}) {
                            key(k);
                            p_.unsigned_integer(l.size);
                        }
                        key("stream");
                        p_.integer(0);
                        key("segment_type");
                        p_.interned(l.size >= (1u << 20) ? "large" : "small");
                        key("segment_pool_id");
                        p_.integer(0);
                        p_.integer(0);
                        p_.tuple2();
                        key("is_expandable");
                        p_.boolean(false);
                        key("frames");
                        frames(l.site);
                        key("blocks");
                        p_.empty_list();
                        p_.mark();
                        dict([&] {
                            key("address");
                            p_.unsigned_integer(l.address);
                            key("size");
                            p_.unsigned_integer(l.size);
                            key("requested_size");
                            p_.unsigned_integer(l.size);
                            key("state");
                            p_.interned("active_allocated");
                            key("frames");
                            frames(l.site);
                        });
                        p_.appends();
                    });
                p_.appends();
            }
            key("device_traces");
            p_.empty_list();
            p_.mark();
            for (int d = 0; d < devices; ++d) {
                p_.empty_list();
                bool any = false;
                for (const auto& rec : log.records()) {
                    if (device_of(rec.device) != d) continue;
                    if (!any) p_.mark();
                    any = true;
                    switch (rec.action) {
                    case AllocationLog::Action::Alloc:
                        entry("segment_alloc", rec.address, rec.size, rec.ts, rec.site);
                        entry("alloc", rec.address, rec.size, rec.ts, rec.site);
                        break;
                    case AllocationLog::Action::Free:
                        entry("free_requested", rec.address, rec.size, rec.ts, rec.site);
                        entry("free_completed", rec.address, rec.size, rec.ts, rec.site);
                        entry("segment_free", rec.address, rec.size, rec.ts, rec.site);
                        break;
                    case AllocationLog::Action::Oom:
                        entry("oom", rec.address, rec.size, rec.ts, rec.site, true);
                        break;
                    }
                }
                if (any) p_.appends();
            }
            p_.appends();
            key("allocator_settings");
            dict([&] {
                key("PYTORCH_CUDA_ALLOC_CONF");
                p_.string("");
                key("expandable_segments");
                p_.boolean(false);
                key("trace_alloc_max_entries");
                p_.unsigned_integer(log.max_records());
                key("trace_alloc_overflowed");
                p_.boolean(log.dropped() > 0);
                key("producer");
                p_.string("gpuleak-report: one segment per device allocation");
            });
            key("external_annotations");
            p_.empty_list();
        });
        p_.finish();
    }

private:
    const Report& r_;
    Pickler p_;
    std::unordered_map<uint32_t, uint32_t> frame_memo_;
};

} // namespace

void render_torch_snapshot(const ExportInput& in, std::ostream& out) {
    SnapshotWriter(*in.report, out).write(*in.allocations);
}

} // namespace gpuleak::analyzer
