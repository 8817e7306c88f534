// The loops of a traced program and their iterations, found from the trace itself.
//
// A loop shows in the stacks of the allocations it makes. On one thread, take two allocations in a
// row and the first frame (from the outermost) where their stacks differ:
//   - the same function at an earlier position than before: execution went back in that
//     function: a loop's back edge. Earlier: of two statements the source shows (C, C++), the
//     one that begins on a lower line, as an optimizer need not keep them in order in the
//     binary; else a lower return address or bytecode offset. A frame calling an inlined body
//     stands at that body's entry (model/site_table.h), so that its calls are one position;
//   - the same call position reaching a different function (unless the first ends in a tail
//     call to the second, which is gone from the second's stacks), or the very same stack again:
//     that position ran again: a loop around it;
//   - a higher position: the function moved forward, no loop; a difference inside library code
//     (a framework's own loop or branch): the program's call goes on, no loop. But a library's
//     function that went back to a position its readable source shows in no loop with the one
//     before was called again (a model whose forward makes two tensors, called once per
//     iteration): by the innermost frame of the program's own code further out, which then ran
//     again as in the case above, unless a library frame between them sits in a loop of its own.
// Only frames of the program's own code can carry loops (model/frame_origin.h), and a library's
// Python frame inside a loop of its source that calls the program's code where no frame of the
// program further out is in a loop (a framework's fit loop calling the program's training_step:
// model/site_table.cpp, SiteTable's Site::path). Which frame loops
// is ambiguous when a function restarts from the top (the function loops, or its caller calls it
// again): the source decides where it is readable (the position's line inside a for/while of its
// function, model/source_files.h); where it is not, both are counted, and a caller's loop that
// has the same iterations and allocations as the inner one is that loop again: it is listed once,
// as the inner one.
//
// A loop is the place the back edges return to (its head: a call position in one activation chain
// of one thread) and, where the source shows it, the loop statement both ends of its back edges
// sit in: nested loops whose first allocation is the same are told apart so. Where the source
// shows it, back edges of one statement that return to different positions (an iteration that
// skips an `if`'s call returns to the call after it) are one loop with several heads, the first
// of them its head. Its body reaches from the head to the furthest position a back edge came
// from, or, where the source shows it, every position inside its statement. Each entry into a
// head starts an iteration: through a back edge of the loop, or from outside its body, which
// also begins a run (as an outer loop's back edge does for the loops nested in it); going on
// from one head to another within the body does not. An allocation belongs to the innermost
// loop whose body holds one of its frames.
//
// Marked iterations take precedence: markers (gpuleak_mark_iteration, NVTX ranges), one loop per
// name, and --iteration-site FILE:LINE (each one a loop whose iterations start at the allocations
// passing through that line). They span every thread; a site whose first allocation falls between
// the start of a marked loop's first iteration and the end of its last (as long as its typical
// iteration) belongs to it, to the one with more iterations where marked loops nest.
//
// A thread without a loop of its own (one started per iteration, a pool's worker whose loop is
// library code) is timed by the loops of the others: its site belongs to the loop, of another
// thread, whose span holds its first allocation (the one with most allocations where several do),
// and all such threads' allocations of a site are counted together in that loop, so that a buffer
// kept by each of many short threads grows per iteration as it does in the program.
//
// A library's native thread in a Python program (PyTorch's autograd engine making the gradients:
// Site::library_thread) has loops in the library's frames, but works for the program's: a site of
// it belongs to the inferred loop of another thread whose iterations hold all its allocations
// there (up to three typical iterations, or as long as they had run, after the last start; where
// every iteration shows, up to the loop's end for a site that made no more in the last iteration
// than in a typical one, a last backward pass that stalled, and from before its first iteration
// for one that made no more than that before it, a warm-up step; the one with most allocations),
// and to its own loop only where none does: under a caching allocator the program's loops show
// only their first steps.
//
// What no loop holds, of threads that the program starts in rounds (workers per epoch), belongs to
// the loop of those rounds (analysis/thread_rounds.h), counted together for all of them.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/call_tree.h"
#include "model/source_files.h"

namespace gpuleak::analyzer {

struct Loop {
    uint32_t id = 0;
    std::string source;  // "inferred", "markers", "site", "threads" (analysis/thread_rounds.h)
    std::string name;    // marker name or --iteration-site location; inferred: ""
    int64_t thread = -1; // recording thread of an inferred loop; -1: all threads
    // Inferred: the head (CallTree node) and the body's extent in the head's function. Threads:
    // the threads' routine.
    uint32_t head = 0;
    uint64_t body_end_pc = 0;
    int loop_line = 0; // the for/while line, where the source shows it
    // Inferred: the source shows the head's line in no loop statement, so what repeats is a loop
    // inside what that line calls (a library's), not the line itself.
    bool head_outside_loops = false;
    // Every allocation in it is a block one of PyTorch's caching allocators keeps
    // (Site::in_pytorch_cache): all that shows of it is where the cache grew.
    bool seen_through_cache = false;
    std::vector<uint64_t> starts; // iteration start times (ns), ascending; iteration k starts at
                                  // starts[k-1]
    // The iterations (1-based, ascending) entered from outside the loop, not through its own back
    // edge: each begins a run (the inner loop of each outer iteration). Always holds 1.
    std::vector<uint32_t> run_starts;
    uint64_t end_ts = 0;      // end of its last iteration
    bool runs_to_end = false; // never left before the trace ended (teardown in its last
                              // iteration)
    uint64_t allocations = 0; // allocations of its body
    // Inferred on a thread that runs none of the program's code (Site::library_thread: PyTorch's
    // autograd engine): the library's own loop.
    bool library_thread = false;
    uint32_t iterations() const { return static_cast<uint32_t>(starts.size()); }
};

// Per thread, consecutive allocations in, loops out. Separate from the trace so that tests can
// feed it paths directly.
class LoopFinder {
public:
    // Says whether a call position sits inside a loop statement; by default the source files.
    using LoopOracle = LoopStatement (*)(const CallNode& node, void* context);
    LoopFinder(const CallTree& calls, LoopOracle oracle = nullptr, void* oracle_context = nullptr);
    // Says whether the call at `call` reaches `callee` after `caller` in one pass because tail
    // calls took `caller`'s frame away (`caller` and `callee` are the frames under `call` on two
    // stacks in a row); by default never.
    using TailCalls = bool (*)(const CallNode& call, const CallNode& caller, const CallNode& callee,
                               void* context);
    void set_tail_calls(TailCalls tail_calls, void* context);
    ~LoopFinder();
    LoopFinder(const LoopFinder&) = delete;
    LoopFinder& operator=(const LoopFinder&) = delete;

    // `path`: CallTree nodes outermost first, each the parent of the next (a chain, as SiteTable
    // makes them); times ascending per thread. `path_id`, if given, names the path (the same id,
    // the same path), which spares a path met again most of the work.
    static constexpr uint32_t kUnnamedPath = ~0u;
    void on_alloc(uint32_t thread, uint64_t ts, const std::vector<uint32_t>& path,
                  uint32_t path_id = kUnnamedPath);
    // Loops with at least two iterations. `end_ts`: the time of the trace's last event. Once: the
    // loops' start times are moved out.
    std::vector<Loop> finish(uint64_t end_ts);
    // The innermost loop holding a path on a thread, as an index into finish()'s result; -1 if
    // none. Valid after finish().
    int64_t loop_of(uint32_t thread, const std::vector<uint32_t>& path) const;
    // The loop run by what a frame of the program's own code on `path` calls, on a thread, the
    // innermost such frame's (`sum(model(x) for x in xs)`: the generator's loop, run by sum()
    // from the statement's frame, whose additions are allocated at that frame between its
    // steps); the one with most allocations where several are; -1 if none. Valid after finish().
    int64_t loop_run_by(uint32_t thread, const std::vector<uint32_t>& path) const;

private:
    void fold_echoes(std::vector<Loop>& loops);
    struct State;
    State* state_;
};

struct LoopOptions {
    std::vector<std::string> site_locations; // --iteration-site FILE:LINE, each a loop
    uint32_t warmup = 0;                     // iterations of each loop the verdicts ignore
};

struct LoadedTrace;
class SiteTable;

struct Loops {
    std::vector<Loop> loops;
    uint32_t warmup = 0;
    uint64_t markers = 0;     // marker records in the trace
    uint64_t teardown_ts = 0; // the process's last allocation: what comes after is teardown
    uint64_t end_ts = 0;      // the trace's last event, or the process's exit if later
    // (site << 32 | thread) -> loop index, for every pair that allocates inside a loop.
    std::unordered_map<uint64_t, uint32_t> by_site_thread;
    int64_t loop_of(uint32_t site, uint32_t thread) const {
        auto it = by_site_thread.find(uint64_t{site} << 32 | thread);
        return it == by_site_thread.end() ? int64_t{-1} : int64_t{it->second};
    }
    // No inferred loop runs on `thread`: its allocations of a site are counted together with
    // those of every other such thread, per loop (see above).
    bool pooled(uint32_t thread) const;
    // The allocations of `thread` in `loop` are counted together with those of other threads:
    // the thread is pooled, or the loop is one of rounds of threads.
    bool pools(uint32_t loop, uint32_t thread) const;
    // The marked loop, else the loop, holding most allocations (the program's main loop); -1 if
    // none.
    int64_t main_loop() const;
};

// The median gap between consecutive starts (ascending, at least two): the gap of rank
// (size - 1) / 2 among them, in memory of its own that does not grow with them.
uint64_t median_gap(const std::vector<uint64_t>& starts);

struct Event;
struct PassedOver;

// What find_loops does with each event, apart from the pass that delivers them: pass 1 hands it
// its events as it reads them (analysis/analyze.cpp), so that loops cost no pass of their own.
class LoopPass {
public:
    // `check_definitions`: note whether a stack's definitions were all there when its first event
    // came (in pass 1 a code object may be defined by another thread after a stack using it).
    LoopPass(LoadedTrace& trace, SiteTable& sites, const LoopOptions& options,
             bool check_definitions = false);
    ~LoopPass();
    LoopPass(const LoopPass&) = delete;
    LoopPass& operator=(const LoopPass&) = delete;

    // Every timed record, in pass 2's order; or only the allocations and markers, and then the
    // others' times through passed_over() (pass 1: thread_merge.h's Timed).
    void on_event(const Event& e);
    void passed_over(const PassedOver& passed);
    // False if a site was made before all of its definitions were read (check_definitions).
    bool definitions_complete() const;
    Loops finish();

private:
    struct State;
    State* state_;
};

// One pass over the trace's events.
Loops find_loops(LoadedTrace& trace, SiteTable& sites, const LoopOptions& options);

struct LoopSummary;
// What a report says of each loop: where its head is, its for/while line, iterations, span.
std::vector<LoopSummary> summarize_loops(const Loops& loops, const CallTree& calls);

} // namespace gpuleak::analyzer
