// Everything one application thread needs to record events without a global lock.
#pragma once

#include <atomic>
#include <cstdint>

#include "recorder/stack_trie.h"
#include "session/chunk.h"
#include "support/spin_lock.h"

namespace gpuleak::python {
struct CodeCache;
}
namespace gpuleak::unwind {
class RuleCache;
struct WalkMemo;
} // namespace gpuleak::unwind

namespace gpuleak {

struct ThreadState {
    SpinLock lock;          // owner per event; writer thread when sealing an idle chunk
    Chunk* chunk = nullptr; // being filled
    uint32_t thread_index = 0;
    uint64_t sequence = 0; // of the next sealed chunk
    uint64_t last_ts = 0;
    int tid = 0;
    bool announced = false; // Thread record written in this process's trace
    // Cleared by the thread's exit (holding only its own lock), read and set by a new thread
    // looking for a state to reuse (holding the registry's): atomic, since the two hold different
    // locks.
    std::atomic<bool> alive{true};

    StackTrie native;
    StackTrie python;

    // The previous stack (innermost first, as unwound) and its node ids (outermost first):
    // consecutive allocations usually share a long common prefix, so only the differing tail is
    // looked up. The unwind buffer and prev_frames swap roles after each new stack.
    uint64_t* prev_frames = nullptr;
    uint64_t* prev_nodes = nullptr;
    unsigned prev_depth = 0;
    uint64_t* scratch = nullptr; // unwind buffer
    void* py_frames = nullptr;   // Python frame buffer, mapped on first use
    // The previous Python stack as captured (innermost first), and its trie keys and nodes,
    // outermost first (in the same mapping). py_frames and py_prev_frames swap roles after each
    // new stack.
    void* py_prev_frames = nullptr;
    uint64_t* py_prev_keys = nullptr;
    uint64_t* py_prev_nodes = nullptr;
    unsigned py_prev_depth = 0;
    python::CodeCache* py_code_cache = nullptr; // in the same mapping
    unsigned capacity = 0;                      // frames per buffer
    unwind::RuleCache* rules = nullptr;         // frame rules by return address (own mapping)
    unwind::WalkMemo* walk_memo = nullptr;      // the previous native walk (own mapping)

    ThreadState* next_registered = nullptr;
};

} // namespace gpuleak
