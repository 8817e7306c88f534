// trace_synth: writes a gpuleak trace of a given number of events through format/'s TraceBuilder
// (the preload's record encoders and block writer: per-thread 64 KiB blocks, zstd level 1), so the
// analyzer can be timed on traces far longer than a test program makes.
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
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "gpuleak/format/trace_builder.h"

namespace {

using gpuleak::format::Api;
using gpuleak::format::Space;
using gpuleak::format::ThreadRef;
using gpuleak::format::TraceBuilder;

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

// One recording thread: its stacks and its live allocations.
class Thread {
public:
    Thread(uint32_t index, const Options& o, TraceBuilder& trace)
        : index_(index), options_(o), trace_(trace),
          ref_(trace.thread(1000 + index, "synth", index)), node_of_stack_(o.sites, 0) {
        for (unsigned i = 0; i < o.sites; ++i)
            free_slots_.push_back(o.sites - 1 - i);
    }

    void event(uint64_t ts) {
        if (step_ == 0 && options_.markers && index_ == 1) trace_.marker(ref_, ts);
        if (step_ < options_.sites)
            alloc_one(ts, step_);
        else
            free_one(ts);
        step_ = (step_ + 1) % (2 * options_.sites);
    }

private:
    struct Live {
        uint64_t address;
        uint32_t slot;
    };

    // The stack's innermost node id; the builder defines its new nodes first.
    uint64_t stack_node(unsigned stack) {
        if (node_of_stack_[stack]) return node_of_stack_[stack];
        std::vector<uint64_t> ips(options_.depth); // innermost first
        for (unsigned level = 0; level < options_.depth; ++level) {
            // The outer frames are shared; the three innermost tell the stacks apart, and the
            // innermost one the threads (each thread runs code of its own, as a data loader and a
            // training loop do).
            unsigned from_inner = options_.depth - 1 - level;
            ips[from_inner] = 0x400000 + level * 0x40 +
                              (from_inner < 3 ? (stack * 3 + from_inner + 1) * 0x10000 : 0) +
                              (from_inner == 0 ? uint64_t{index_} << 32 : 0);
        }
        return node_of_stack_[stack] = trace_.stack(ref_, ips);
    }

    void alloc_one(uint64_t ts, unsigned site) {
        uint64_t node = stack_node(site);
        uint32_t slot = free_slots_.back();
        free_slots_.pop_back();
        uint64_t address =
            0x7f0000000000ull + (static_cast<uint64_t>(index_) << 36) + slot * 0x200000ull;
        uint64_t size = (512ull << (site % 16)) + site * 512;
        trace_.alloc(ref_, ts, address, size, node, {.api = Api::cudaMalloc});
        live_.push_back({address, slot});
    }

    void free_one(uint64_t ts) {
        Live l = live_.front();
        live_.pop_front();
        free_slots_.push_back(l.slot);
        trace_.free(ref_, ts, l.address, {.api = Api::cudaFree, .space = Space::Device});
    }

    uint32_t index_;
    const Options& options_;
    TraceBuilder& trace_;
    ThreadRef ref_;
    unsigned step_ = 0; // in the iteration: S allocations, then S frees
    std::vector<uint64_t> node_of_stack_;
    std::deque<Live> live_;
    std::vector<uint32_t> free_slots_;
};

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
    gpuleak::format::FileSink file;
    std::remove(o.out.c_str()); // a trace from an earlier run is replaced
    if (int err = file.create(o.out.c_str())) {
        std::fprintf(stderr, "trace_synth: %s: %s\n", o.out.c_str(), std::strerror(err));
        return 1;
    }
    uint64_t ts = 1000;
    {
        TraceBuilder trace(file);
        trace.process({.pid = 4242,
                       .ppid = 1,
                       .start_unix_ns = 1700000000000000000ull,
                       .exe = "/usr/bin/trace_synth",
                       .argv = {"trace_synth"},
                       .env = {},
                       .tool_version = "synthetic"});
        std::vector<std::unique_ptr<Thread>> threads;
        for (unsigned t = 0; t < o.threads; ++t)
            threads.push_back(std::make_unique<Thread>(t + 1, o, trace));
        uint64_t rng = o.seed | 1;
        for (uint64_t i = 0; i < o.events; ++i) {
            ts += 50 + next_random(rng) % 1000;
            threads[i % o.threads]->event(ts); // in lockstep, like a loop split over threads
        }
        trace.end(ts);
        std::printf("events=%llu bytes=%llu\n", static_cast<unsigned long long>(o.events),
                    static_cast<unsigned long long>(trace.bytes_written()));
    }
    return 0;
}
