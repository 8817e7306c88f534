// Pass 1 over a trace: every definition (process, modules, stack nodes, code objects), with the
// per-thread ids of the recorder mapped to process-wide ids. Events are left for pass 2
// (event_stream.h), which can then resolve anything it meets regardless of write order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

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

struct LoadedTrace {
    std::string path;
    format::TraceFile file;
    ProcessInfo process;
    bool have_process = false;
    bool clean_end = false; // a TraceEnd record was written (the process exited normally)
    std::vector<ModuleInfo> modules;
    std::vector<NativeNode> native_nodes{{0, 0}}; // index = global id; 0 is the root
    std::vector<PyNode> py_nodes{{0, 0, 0, false}};
    std::unordered_map<uint64_t, PyCode> py_code;
    uint32_t py_version_hex = 0;
    std::unordered_map<uint32_t, std::string> thread_names; // thread index -> "tid name"
    std::vector<std::string> warnings;

    // Thread-local stack ids of the recorder -> global ids.
    uint32_t native_node(uint32_t thread, uint64_t local) const;
    uint32_t py_node(uint32_t thread, uint64_t local) const;

    std::unordered_map<uint64_t, uint32_t> native_local; // key (thread << 40 | local)
    std::unordered_map<uint64_t, uint32_t> py_local;
};

// Opens and reads all definitions. False with `error` set when the file is not a usable trace.
bool load_trace(const std::string& path, LoadedTrace& trace, std::string& error);

} // namespace gpuleak::analyzer
