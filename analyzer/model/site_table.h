// Call sites: a recorded stack minus the frames inside the tracer and the CUDA libraries, with
// Python frames spliced in where the interpreter ran. Allocations with equal sites are grouped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/symbolizer.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

enum class StackMode { Merged, Python, Native };

struct Frame {
    std::string function;
    std::string file;
    int line = 0;
    std::string module;
    bool python = false;
    bool inlined = false;
};

struct Site {
    uint32_t id = 0;
    std::vector<Frame> frames; // innermost first
    bool no_python_state =
        false; // recorded in a process with Python, on a thread without Python frames
    // The frame a user reads first: the innermost Python frame if any, else the innermost native
    // frame with a name.
    const Frame* headline() const;
};

class SiteTable {
public:
    SiteTable(const LoadedTrace& trace, Symbolizer& symbolizer, StackMode mode);
    // The site of an event's (global) native and Python stack nodes; ids are dense from 0.
    uint32_t site_for(uint32_t native_node, uint32_t py_node);
    const Site& site(uint32_t id) const { return sites_[id]; }
    size_t size() const { return sites_.size(); }

private:
    uint32_t trimmed_native(uint32_t node);
    bool is_tracer_frame(uint64_t ip);
    std::vector<Frame> native_frames(uint32_t node);
    std::vector<Frame> python_frames(uint32_t py_node, std::vector<bool>* entries);

    const LoadedTrace& trace_;
    Symbolizer& symbolizer_;
    StackMode mode_;
    std::unordered_map<uint32_t, uint32_t> trimmed_;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> by_key_;
    std::vector<Site> sites_;
};

} // namespace gpuleak::analyzer
