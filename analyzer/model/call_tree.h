// A site's frames as a tree of call positions: each node is one frame (a function and the return
// address or bytecode offset in it) under its caller's node, so two allocations made through the
// same chain of calls share their path's prefix, and positions inside one function compare as
// numbers. Nodes of frames in the program's own code are marked `user`: loop detection
// (analysis/loops.h) looks for loops there only.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpuleak::analyzer {

struct CallNode {
    uint32_t parent = 0;   // 0 = root
    uint32_t function = 0; // dense id of (file, function); equal ids are one function
    uint64_t pc = 0;       // native return address or Python byte offset, within `function`
    // Native: a return address in `function` itself, where `pc` is an inlined body's entry (which
    // may be the function's first byte, so that pc - 1 lies in another); else `pc`.
    uint64_t return_address = 0;
    bool python = false;
    bool user = false;
    std::string function_name, file; // for naming loops
    int line = 0;
};

class CallTree {
public:
    CallTree() { nodes_.push_back({}); }
    // `return_address`: CallNode's (0: `pc`); that of the first frame to make the node.
    uint32_t node(uint32_t parent, const std::string& function, const std::string& file, int line,
                  uint64_t pc, bool python, bool user, uint64_t return_address = 0);
    const CallNode& operator[](uint32_t id) const { return nodes_[id]; }
    size_t size() const { return nodes_.size(); }

private:
    struct Key {
        uint32_t parent, function;
        uint64_t pc;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const {
            uint64_t h = (k.pc * 0x9E3779B97F4A7C15ull) ^ (uint64_t{k.parent} << 32 | k.function);
            return static_cast<size_t>(h ^ (h >> 31));
        }
    };
    std::vector<CallNode> nodes_;
    std::unordered_map<Key, uint32_t, KeyHash> by_key_;
    std::unordered_map<std::string, uint32_t> functions_;
};

} // namespace gpuleak::analyzer
