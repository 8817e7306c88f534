// trace_synth: writes a gpuleak trace of a given number of events, built the way libgpuleak.so
// builds one (per-thread 64 KiB chunks of records from format/encoder.h, sealed into zstd level-1
// blocks by seal_block_header), so the analyzer can be timed on traces far longer than a test
// program makes.
//
//   trace_synth --out PATH --events N [--threads T] [--sites S] [--depth D] [--markers 0|1] [--seed
//   X]
//
// Each thread runs a training loop: every iteration allocates once from each of S call sites
// (stacks of D frames sharing their outer frames), then frees those allocations oldest first, so
// few are live at any time. Sizes are fixed per site, addresses are reused as a caching allocator
// reuses them, times advance by 50..1049 ns per event, and the threads take turns event by event.
// --markers 1 adds a gpuleak_mark_iteration marker per iteration of thread 1. The trace ends with a
// TraceEnd record, as after a clean exit.
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "gpuleak/format/encoder.h"

namespace {

using gpuleak::format::Api;
using gpuleak::format::BlockHeader;
using gpuleak::format::Encoder;
using gpuleak::format::MemKind;
using gpuleak::format::Space;
using gpuleak::format::Tag;

// As in the preload (session/chunk.h, recorder.cpp): the chunk size and the room reserved per
// record.
constexpr size_t kChunkPayload = 64 * 1024;
constexpr size_t kMaxFixedRecord = 1 + 12 * gpuleak::format::kMaxVarintBytes;

struct Options {
    std::string out;
    uint64_t events = 0;
    unsigned threads = 2;
    unsigned sites = 24;
    unsigned depth = 35;
    bool markers = false;
    uint64_t seed = 1;
};

uint64_t next_random(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

class BlockFile {
public:
    explicit BlockFile(const std::string& path)
        : file_(std::fopen(path.c_str(), "wb")), zstd_(ZSTD_createCCtx()) {
        if (!file_) {
            std::perror(path.c_str());
            std::exit(1);
        }
        gpuleak::format::FileHeader h{};
        std::memcpy(h.magic, gpuleak::format::kFileMagic, sizeof h.magic);
        h.version = gpuleak::format::kFormatVersion;
        h.header_size = sizeof h;
        put(&h, sizeof h);
        compressed_.resize(ZSTD_compressBound(kChunkPayload));
    }
    ~BlockFile() {
        ZSTD_freeCCtx(zstd_);
        if (std::fclose(file_) != 0) {
            std::perror("trace_synth: close");
            std::exit(1);
        }
    }

    // What the preload's writer does with a sealed chunk (session/trace_writer.cpp).
    void write(uint32_t thread, uint64_t sequence, uint64_t first_ts, uint64_t last_ts,
               const uint8_t* raw, size_t used) {
        BlockHeader h{};
        const uint8_t* payload = raw;
        h.stored_size = static_cast<uint32_t>(used);
        size_t n = ZSTD_compressCCtx(zstd_, compressed_.data(), compressed_.size(), raw, used, 1);
        if (!ZSTD_isError(n) && n < used) {
            payload = compressed_.data();
            h.stored_size = static_cast<uint32_t>(n);
            h.flags = gpuleak::format::kBlockZstd;
        }
        h.raw_size = static_cast<uint32_t>(used);
        h.thread_index = thread;
        h.sequence = sequence;
        h.first_ts = first_ts;
        h.last_ts = last_ts;
        gpuleak::format::seal_block_header(h, payload);
        put(&h, sizeof h);
        put(payload, h.stored_size);
        bytes_ += sizeof h + h.stored_size;
    }
    uint64_t bytes() const { return bytes_ + sizeof(gpuleak::format::FileHeader); }

private:
    void put(const void* p, size_t n) {
        if (std::fwrite(p, 1, n, file_) != n) {
            std::perror("trace_synth: write");
            std::exit(1);
        }
    }
    std::FILE* file_;
    ZSTD_CCtx* zstd_;
    std::vector<uint8_t> compressed_;
    uint64_t bytes_ = 0;
};

// One recording thread: its chunk, its stack trie and its live allocations.
class Thread {
public:
    Thread(uint32_t index, const Options& o, BlockFile& file)
        : index_(index), options_(o), file_(file), chunk_(kChunkPayload),
          node_of_stack_(o.sites, 0) {
        for (unsigned i = 0; i < o.sites; ++i)
            free_slots_.push_back(o.sites - 1 - i);
    }

    void event(uint64_t ts) {
        if (!announced_) announce();
        if (step_ == 0 && options_.markers && index_ == 1) marker(ts);
        if (step_ < options_.sites)
            alloc_one(ts, step_);
        else
            free_one(ts);
        step_ = (step_ + 1) % (2 * options_.sites);
    }

    void flush() { seal(); }

private:
    struct Live {
        uint64_t address;
        uint32_t slot;
    };

    Encoder reserve(size_t need) {
        if (kChunkPayload - used_ < need) seal();
        return Encoder(chunk_.data() + used_, chunk_.data() + kChunkPayload);
    }
    void commit(const Encoder& e) { used_ = static_cast<size_t>(e.position() - chunk_.data()); }

    uint64_t dt(uint64_t ts) {
        if (!has_ts_) {
            has_ts_ = true;
            first_ts_ = last_ts_ = ts;
            return 0;
        }
        uint64_t d = ts - last_ts_;
        last_ts_ = ts;
        return d;
    }

    void seal() {
        if (!used_) return;
        file_.write(index_, sequence_++, first_ts_, last_ts_, chunk_.data(), used_);
        used_ = 0;
        has_ts_ = false;
    }

    void announce() {
        Encoder e = reserve(kMaxFixedRecord + 16);
        e.tag(Tag::Thread);
        e.varint(1000 + index_);
        e.string("synth");
        commit(e);
        announced_ = true;
    }

    // The stack's innermost node id, defining its new edges first (as recorder.cpp's
    // intern_native).
    uint64_t stack_node(unsigned stack) {
        if (node_of_stack_[stack]) return node_of_stack_[stack];
        uint64_t node = 0;
        for (unsigned level = 0; level < options_.depth; ++level) {
            // The outer frames are shared; the three innermost tell the stacks apart, and the
            // innermost one the threads (each thread runs code of its own, as a data loader and a
            // training loop do).
            unsigned from_inner = options_.depth - 1 - level;
            uint64_t ip = 0x400000 + level * 0x40 +
                          (from_inner < 3 ? (stack * 3 + from_inner + 1) * 0x10000 : 0) +
                          (from_inner == 0 ? uint64_t{index_} << 32 : 0);
            auto [it, fresh] = edges_.try_emplace({node, ip}, next_id_);
            if (fresh) {
                ++next_id_;
                Encoder e = reserve(kMaxFixedRecord);
                e.tag(Tag::StackNode);
                e.varint(it->second);
                e.varint(node);
                e.varint(ip);
                commit(e);
            }
            node = it->second;
        }
        return node_of_stack_[stack] = node;
    }

    void marker(uint64_t ts) {
        Encoder e = reserve(kMaxFixedRecord + 32);
        e.tag(Tag::Marker);
        e.varint(dt(ts));
        e.string("gpuleak_mark_iteration");
        commit(e);
    }

    void alloc_one(uint64_t ts, unsigned site) {
        uint64_t node = stack_node(site);
        uint32_t slot = free_slots_.back();
        free_slots_.pop_back();
        uint64_t address =
            0x7f0000000000ull + (static_cast<uint64_t>(index_) << 36) + slot * 0x200000ull;
        uint64_t size = (512ull << (site % 16)) + site * 512;
        Encoder e = reserve(kMaxFixedRecord);
        e.tag(Tag::Alloc);
        e.varint(dt(ts));
        e.varint(static_cast<uint64_t>(Api::cudaMalloc));
        e.varint(static_cast<uint64_t>(MemKind::Device));
        e.svarint(0);
        e.varint(address);
        e.varint(size);
        e.varint(node);
        e.varint(0);
        commit(e);
        live_.push_back({address, slot});
    }

    void free_one(uint64_t ts) {
        Live l = live_.front();
        live_.pop_front();
        free_slots_.push_back(l.slot);
        Encoder e = reserve(kMaxFixedRecord);
        e.tag(Tag::Free);
        e.varint(dt(ts));
        e.varint(static_cast<uint64_t>(Api::cudaFree));
        e.varint(static_cast<uint64_t>(Space::Device));
        e.varint(l.address);
        e.svarint(0);
        commit(e);
    }

    uint32_t index_;
    const Options& options_;
    BlockFile& file_;
    std::vector<uint8_t> chunk_;
    size_t used_ = 0;
    bool has_ts_ = false;
    uint64_t first_ts_ = 0, last_ts_ = 0;
    uint64_t sequence_ = 0;
    bool announced_ = false;
    unsigned step_ = 0; // in the iteration: S allocations, then S frees
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> edges_;
    uint64_t next_id_ = 1;
    std::vector<uint64_t> node_of_stack_;
    std::deque<Live> live_;
    std::vector<uint32_t> free_slots_;
};

void global_block(BlockFile& file, uint64_t sequence, uint64_t ts, void (*fill)(Encoder&, uint64_t),
                  uint64_t arg) {
    std::vector<uint8_t> chunk(kChunkPayload);
    Encoder e(chunk.data(), chunk.data() + kChunkPayload);
    fill(e, arg);
    file.write(gpuleak::format::kGlobalThreadIndex, sequence, ts, ts, chunk.data(),
               static_cast<size_t>(e.position() - chunk.data()));
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        const char* v = argv[i + 1];
        uint64_t n = std::strtoull(v, nullptr, 10);
        if (k == "--out")
            o.out = v;
        else if (k == "--events")
            o.events = n;
        else if (k == "--threads")
            o.threads = static_cast<unsigned>(n);
        else if (k == "--sites")
            o.sites = static_cast<unsigned>(n);
        else if (k == "--depth")
            o.depth = static_cast<unsigned>(n);
        else if (k == "--markers")
            o.markers = n != 0;
        else if (k == "--seed")
            o.seed = n;
        else
            return false;
    }
    return argc % 2 == 1 && !o.out.empty() && o.events && o.threads >= 1 && o.threads <= 1024 &&
           o.sites >= 1 && o.sites <= 100000 && o.depth >= 3 && o.depth <= 4096;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(
            stderr,
            "usage: trace_synth --out PATH --events N [--threads T] [--sites S] [--depth D] "
            "[--markers 0|1] [--seed X]\n");
        return 2;
    }
    BlockFile file(o.out);
    global_block(
        file, 0, 0,
        [](Encoder& e, uint64_t) {
            e.tag(Tag::Process);
            e.varint(4242);
            e.varint(1);
            e.varint(1700000000000000000ull);
            e.string("/usr/bin/trace_synth");
            e.varint(1);
            e.string("trace_synth");
            e.varint(0);
            e.string("synthetic");
        },
        0);
    std::vector<Thread*> threads;
    for (unsigned t = 0; t < o.threads; ++t)
        threads.push_back(new Thread(t + 1, o, file));
    uint64_t rng = o.seed | 1, ts = 1000;
    for (uint64_t i = 0; i < o.events; ++i) {
        ts += 50 + next_random(rng) % 1000;
        threads[i % o.threads]->event(ts); // in lockstep, like a loop split over threads
    }
    for (Thread* t : threads) {
        t->flush();
        delete t;
    }
    global_block(
        file, 1, ts,
        [](Encoder& e, uint64_t) {
            e.tag(Tag::TraceEnd);
            e.varint(0);
            e.varint(0);
        },
        0);
    std::printf("events=%llu bytes=%llu\n", static_cast<unsigned long long>(o.events),
                static_cast<unsigned long long>(file.bytes()));
    return 0;
}
