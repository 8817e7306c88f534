// Pass 1 over a trace: every definition (process, modules, stack nodes, code objects), with the
// per-thread ids of the recorder mapped to process-wide ids. The process-wide stream is read first
// (every module is then known), then the recording threads' blocks merged in time order as pass 2
// merges them (event_stream.h), so that a listener can do work of its own on the events in that
// same order while the definitions are read (the loop finder, analysis/loops.h). Of the events,
// pass 1 itself keeps only the markers; pass 2 can resolve anything it meets regardless of write
// order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/growing_times.h"
#include "gpuleak/format/reader.h"
#include "symbolize/symbolizer.h"

namespace gpuleak::analyzer {

struct ProcessInfo {
    uint64_t pid = 0, ppid = 0, start_unix_ns = 0;
    std::string exe;
    std::vector<std::string> argv;
    std::vector<std::string> env; // allow-listed entries only
    std::string command() const;
    std::string env_value(const std::string& name) const; // "" if absent
};

// A process-wide node of the native stack trie: (parent, return address).
struct NativeNode {
    uint32_t parent; // 0 = root
    uint64_t ip;
};

struct PyCode {
    std::string filename, qualname;
    int firstlineno = 0;
    std::vector<uint8_t> linetable;
};

struct PyNode {
    uint32_t parent; // 0 = root
    uint64_t code_id;
    int32_t byte_offset;
    bool is_entry;
};

// The recorder's per-thread stack ids -> process-wide ids. Each thread's ids come dense from 1, so
// a lookup is an array read; an id far out of sequence (a damaged trace) goes to a map instead.
class LocalIds {
public:
    uint32_t get(uint32_t thread, uint64_t local) const {
        if (thread < dense_.size() && local < dense_[thread].size() && dense_[thread][local])
            return dense_[thread][local];
        if (sparse_.empty()) return 0;
        auto it = sparse_.find(key(thread, local));
        return it == sparse_.end() ? 0 : it->second;
    }
    void set(uint32_t thread, uint64_t local, uint32_t global);

private:
    static uint64_t key(uint32_t thread, uint64_t local) {
        return static_cast<uint64_t>(thread) << 40 | local;
    }
    std::vector<std::vector<uint32_t>> dense_; // [thread][local], 0 = not defined
    std::unordered_map<uint64_t, uint32_t> sparse_;
    uint64_t defined_ = 0, dense_slots_ = 0; // bounds the dense tables by what the file defines
};

struct Event;
struct LoadedTrace;
struct PassedOver;

// Work done in pass 1 itself: on_globals once the process-wide stream is read (before any event),
// then the allocations and markers of the recording threads in the order pass 2 delivers them,
// with the definitions read so far (a thread's own are always there before its events), then what
// pass 1 passed over of the other timed records (thread_merge.h).
class TraceListener {
public:
    virtual ~TraceListener() = default;
    virtual void on_globals(LoadedTrace& /*trace*/) {}
    virtual void on_event(const Event& /*e*/) {}
    virtual void on_passed_over(const PassedOver& /*passed*/) {}
};

struct LoadedTrace {
    std::string path;
    format::TraceFile file;
    ProcessInfo process;
    bool have_process = false;
    bool clean_end = false; // a TraceEnd record was written (the process exited normally)
    uint64_t exit_ts = 0; // its time: the process's exit, which may come long after its last event
    std::vector<ModuleInfo> modules;
    std::vector<NativeNode> native_nodes{{0, 0}}; // index = global id; 0 is the root
    std::vector<PyNode> py_nodes{{0, 0, 0, false}};
    std::unordered_map<uint64_t, PyCode> py_code;
    uint32_t py_version_hex = 0;
    std::vector<std::string> warnings;

    // The Marker records of the recording threads: per name (in the order names first appear),
    // their times, ascending. 8 bytes a marker: a loop marked at every iteration of a long job
    // keeps nothing else per iteration, and the loop pass takes the times over as its iterations
    // (analysis/loops.h).
    struct MarkerSeries {
        std::string name;
        GrowingTimes ts;
    };
    std::vector<MarkerSeries> markers;
    uint64_t marker_count = 0; // of every name, and still after the loop pass took the times
    void add_marker(uint64_t ts, const std::string& name);
    std::unordered_map<std::string, uint32_t> marker_names; // name -> index in markers
    // Pass 1 met something that can make what an event resolved to while pass 1 read it differ
    // from what it resolves to at the end: a definition given again with another value, a module
    // or Python version record in a thread's stream, a block that could not be read (whose
    // warnings a later pass repeats). A listener's work on the events is then not to be trusted.
    bool late_definitions = false;

    // Thread-local stack ids of the recorder -> global ids (0: none, or never defined).
    uint32_t native_node(uint32_t thread, uint64_t local) const {
        return local ? native_local.get(thread, local) : 0;
    }
    uint32_t py_node(uint32_t thread, uint64_t local) const {
        return local ? py_local.get(thread, local) : 0;
    }

    LocalIds native_local;
    LocalIds py_local;
};

// Opens and reads all definitions. False with `error` set when the file is not a usable trace.
bool load_trace(const std::string& path, LoadedTrace& trace, std::string& error,
                TraceListener* listener = nullptr);
// The same for a trace in memory (format/trace_builder.h's bytes()); `name` stands for its path.
bool load_trace(const std::string& name, std::vector<uint8_t> bytes, LoadedTrace& trace,
                std::string& error);

} // namespace gpuleak::analyzer
