// Call sites: a recorded stack minus the frames inside the tracer and the CUDA libraries (shared,
// or the static runtime linked into the program), with Python frames spliced in where the
// interpreter ran. Allocations with equal sites are grouped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/caching_allocator.h"
#include "model/call_tree.h"
#include "model/frame_origin.h"
#include "symbolize/symbolizer.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

enum class StackMode { Merged, Python, Native };

struct Frame {
    std::string function;
    std::string file;
    int line = 0;
    // Of the call on its line, from 1, where DWARF (native) or the line table (Python 3.11+) says;
    // 0 otherwise.
    int column = 0;
    std::string module;
    bool python = false;
    bool inlined = false;
    // Native: the return address. Python: the byte offset where the instructions of its source
    // position begin (pydecode::position_start), so that one call is one place.
    uint64_t pc = 0;
    // Where its call stands for telling calls of one function apart (loops): pc, but for a
    // native frame calling an inlined body, that body's entry (one place for all its calls).
    uint64_t position = 0;
    FrameOrigin origin = FrameOrigin::Unknown;
    // Python 3.11+: where the call's source ends (its column exclusive, from 1); 0 otherwise.
    int end_line = 0, end_column = 0;
};

struct Site {
    uint32_t id = 0;
    std::vector<Frame> frames; // innermost first
    // Recorded in a process with Python, on a thread without Python frames.
    bool no_python_state = false;
    // The frame a user reads first: the innermost frame of the program's own code; without one,
    // the innermost Python frame, else the innermost named frame. -1: no frame at all.
    int headline_index = -1;
    const char* headline_reason = "no frames recorded";
    // Also without a frame of the program's own code: a library's native thread in a Python
    // program (PyTorch's autograd engine). Its loops are the library's: the program's loops time
    // it where they can (analysis/loops.h).
    bool library_thread = false;
    // CallTree nodes of every frame, outermost first. Where no frame is the program's own, its
    // Python frames count as its own for loop detection (a library's Python thread: the source
    // shows its loops), and without Python frames the named frames outside the CUDA runtime.
    std::vector<uint32_t> path;
    const Frame* headline() const { return headline_index < 0 ? nullptr : &frames[headline_index]; }
    // A block one of PyTorch's caching allocators keeps, not a tensor (model/caching_allocator.h).
    CachedBlock cached = CachedBlock::None;
    bool caching_segment() const { return cached == CachedBlock::DeviceSegment; }
    bool in_pytorch_cache() const { return cached != CachedBlock::None; }
};

class SiteTable {
public:
    SiteTable(const LoadedTrace& trace, Symbolizer& symbolizer, StackMode mode);
    // The site of an event's (global) native and Python stack nodes; ids are dense from 0.
    uint32_t site_for(uint32_t native_node, uint32_t py_node);
    const Site& site(uint32_t id) const { return sites_[id]; }
    size_t size() const { return sites_.size(); }
    const CallTree& calls() const { return calls_; }
    // Whether `callee` follows `caller` under the native frame `call` in one call because tail
    // calls took `caller`'s frame away (symbolize/call_sites.h): `caller`'s function ends in a
    // tail call to `callee`'s, or `call` calls `caller`'s function by name and finds another one
    // there, which only tail calls (a chain of them, or one through a pointer) can have put
    // there. Python makes no tail calls.
    bool tail_calls(const CallNode& call, const CallNode& caller, const CallNode& callee);

private:
    uint32_t trimmed_native(uint32_t node);
    bool in_tracer_module(uint64_t ip);
    const std::string& outer_function(uint64_t ip);
    void finish_site(Site& site);
    std::vector<Frame> native_frames(uint32_t node);
    std::vector<Frame> python_frames(uint32_t py_node, std::vector<bool>* entries);

    const LoadedTrace& trace_;
    Symbolizer& symbolizer_;
    StackMode mode_;
    int caching_ = -1; // pytorch_caches(): -1 until the first site asks
    std::unordered_map<uint32_t, uint32_t> trimmed_;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> by_key_;
    // Sites by their frames outside the interpreter: stacks that differ only in CPython's own C
    // frames (a call specialized after its first runs takes another path) are one site.
    std::unordered_map<std::string, uint32_t> by_frames_;
    std::vector<Site> sites_;
    CallTree calls_;
};

} // namespace gpuleak::analyzer
