// A per-thread trie of call stacks, as in heaptrack's tracetree.h: each distinct (parent, frame)
// edge gets a node id once, its definition is written to the trace once, and every event carries
// just the id of its innermost node. Per thread, so interning takes no lock; the analyzer merges
// equal paths from different threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuleak {

class StackTrie {
public:
    StackTrie() = default;
    StackTrie(const StackTrie&) = delete;
    StackTrie& operator=(const StackTrie&) = delete;
    ~StackTrie();

    // Returns the id of the child `frame` of `parent` (0 = root). Sets `created` when the edge is
    // new: the caller must then write its definition before any event that refers to the id.
    // Returns 0 if memory for the table could not be mapped (the caller records the event
    // unstacked).
    uint64_t intern(uint64_t parent, uint64_t frame, bool& created);

    // Forget everything (after fork: the child's trace must define its nodes again).
    void clear();

private:
    struct Slot {
        uint64_t parent;
        uint64_t frame;
        uint64_t id; // 0 = empty
    };
    bool grow();

    Slot* slots_ = nullptr;
    size_t capacity_ = 0; // power of two
    size_t used_ = 0;
    uint64_t next_id_ = 1;
};

} // namespace gpuleak
