// pprof's profile.proto (github.com/google/pprof/proto/profile.proto), written by hand: a few
// varint and length-delimited fields are all a Profile needs. Gzip'd, as the format asks of files.
#include <zlib.h>

#include <map>
#include <stdexcept>
#include <tuple>

#include "render/exports.h"

namespace gpuleak::analyzer {
namespace {

// Protocol buffers wire format: field numbers with wire types 0 (varint) and 2 (bytes).
class Proto {
public:
    void varint(uint64_t v) {
        while (v >= 0x80) {
            buf_ += static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        buf_ += static_cast<char>(v);
    }
    void tag(int field, int wire) { varint(static_cast<uint64_t>(field) << 3 | wire); }
    void uint(int field, uint64_t v) {
        tag(field, 0);
        varint(v);
    }
    // int64 fields carry negative values as 10-byte varints; ours are never negative.
    void int64(int field, int64_t v) { uint(field, static_cast<uint64_t>(v)); }
    void bytes(int field, const std::string& s) {
        tag(field, 2);
        varint(s.size());
        buf_ += s;
    }
    void message(int field, const Proto& m) { bytes(field, m.buf_); }
    void packed(int field, const std::vector<uint64_t>& values) {
        Proto p;
        for (uint64_t v : values)
            p.varint(v);
        bytes(field, p.buf_);
    }
    const std::string& data() const { return buf_; }

private:
    std::string buf_;
};

class Strings {
public:
    Strings() { id(""); } // string_table[0] must be ""
    int64_t id(const std::string& s) {
        auto [it, fresh] = ids_.try_emplace(s, static_cast<int64_t>(list_.size()));
        if (fresh) list_.push_back(s);
        return it->second;
    }
    const std::vector<std::string>& list() const { return list_; }

private:
    std::map<std::string, int64_t> ids_;
    std::vector<std::string> list_;
};

std::string gzip(const std::string& data) {
    z_stream z{};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("zlib: deflateInit2 failed");
    std::string out(deflateBound(&z, data.size()) + 32, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    int rc = deflate(&z, Z_FINISH);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw std::runtime_error("zlib: deflate failed");
    out.resize(z.total_out);
    return out;
}

} // namespace

std::string pprof_message(const std::vector<ExportInput>& in) {
    Proto profile;
    Strings strings;
    auto value_type = [&](const char* type, const char* unit) {
        Proto v;
        v.int64(1, strings.id(type));
        v.int64(2, strings.id(unit));
        return v;
    };
    profile.message(1, value_type("alloc_objects", "count"));
    profile.message(1, value_type("alloc_space", "bytes"));
    profile.message(1, value_type("inuse_objects", "count"));
    profile.message(1, value_type("inuse_space", "bytes"));

    std::map<std::tuple<std::string, std::string>, uint64_t> functions; // (name, file) -> id
    std::map<std::tuple<uint64_t, int64_t>, uint64_t> locations;        // (function, line) -> id
    std::map<std::string, uint64_t> mappings;                           // module -> id
    Proto body;                                                         // functions, locations
    auto mapping_id = [&](const Frame& f) -> uint64_t {
        std::string module = f.python ? std::string("[python]") : f.module;
        if (module.empty()) return 0;
        auto [it, fresh] = mappings.try_emplace(module, mappings.size() + 1);
        if (fresh) {
            Proto m;
            m.uint(1, it->second);
            m.int64(5, strings.id(module));
            m.uint(7, 1);  // has_functions
            m.uint(8, 1);  // has_filenames
            m.uint(9, 1);  // has_line_numbers
            m.uint(10, 1); // has_inline_frames
            profile.message(3, m);
        }
        return it->second;
    };
    auto location_id = [&](const Frame& f) {
        std::string name = f.function.empty() ? "??" : f.function;
        auto [fn, fresh_fn] = functions.try_emplace({name, f.file}, functions.size() + 1);
        if (fresh_fn) {
            Proto p;
            p.uint(1, fn->second);
            p.int64(2, strings.id(name));
            p.int64(3, strings.id(name));
            p.int64(4, strings.id(f.file));
            body.message(5, p);
        }
        auto [loc, fresh_loc] = locations.try_emplace({fn->second, f.line}, locations.size() + 1);
        if (fresh_loc) {
            Proto line;
            line.uint(1, fn->second);
            line.int64(2, f.line);
            Proto p;
            p.uint(1, loc->second);
            if (uint64_t m = mapping_id(f)) p.uint(2, m);
            p.message(4, line);
            body.message(4, p);
        }
        return loc->second;
    };

    double duration_s = 0;
    for (const ExportInput& e : in) {
        const Report& r = *e.report;
        duration_s = std::max(duration_s, r.summary.duration_s);
        for (const SiteStats& s : access::sites(r)) {
            if (!access::allocations(s)) continue;
            Proto sample;
            std::vector<uint64_t> ids;
            for (const Frame& f : access::frames(r, s.site)) // leaf first, as pprof wants
                ids.push_back(location_id(f));
            if (ids.empty()) {
                Frame none;
                none.function = "[no stack]";
                ids.push_back(location_id(none));
            }
            sample.packed(1, ids);
            sample.packed(2, {access::allocations(s), access::bytes_allocated(s),
                              access::live_count_end(s), access::live_bytes_end(s)});
            Proto verdict;
            verdict.int64(1, strings.id("verdict"));
            verdict.int64(2, strings.id(access::verdict(s)));
            sample.message(3, verdict);
            Proto pid;
            pid.int64(1, strings.id("pid"));
            pid.int64(3, static_cast<int64_t>(access::pid(r)));
            sample.message(3, pid);
            if (access::is_growing(s)) {
                Proto growth;
                growth.int64(1, strings.id("growth_per_iteration"));
                growth.int64(3, static_cast<int64_t>(access::growth_per_iteration(s)));
                growth.int64(4, strings.id("bytes"));
                sample.message(3, growth);
            }
            profile.message(2, sample);
        }
    }
    std::string comment = "gpuleak:";
    for (const ExportInput& e : in)
        comment += " pid " + std::to_string(access::pid(*e.report)) + ": " +
                   access::command(*e.report) + ";";
    int64_t comment_id = strings.id(comment);
    int64_t default_type = strings.id("inuse_space");
    Proto period;
    period.int64(1, strings.id("space"));
    period.int64(2, strings.id("bytes"));
    std::string out = profile.data() + body.data();
    Proto tail;
    for (const std::string& s : strings.list())
        tail.bytes(6, s);
    tail.int64(10, static_cast<int64_t>(duration_s * 1e9));
    tail.message(11, period);
    tail.int64(12, 1);
    tail.int64(13, comment_id);
    tail.int64(14, default_type);
    return out + tail.data();
}

void render_pprof(const std::vector<ExportInput>& in, std::ostream& out) {
    std::string data = gzip(pprof_message(in));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

} // namespace gpuleak::analyzer
