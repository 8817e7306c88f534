// The loop finder: loops inferred from the back edges of each thread's allocation stacks
// (LoopFinder in loops.h; the pass that feeds it is in loops.cpp).
#include "analysis/loops.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "common/growing_times.h"

namespace gpuleak::analyzer {
namespace {

uint64_t context_key(uint32_t parent, uint32_t function) {
    return uint64_t{parent} << 32 | function;
}

// Python's comprehensions and generator expressions are loops by construction.
bool is_comprehension(const std::string& function) {
    for (const char* name : {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})
        if (function.ends_with(name)) return true;
    return false;
}

bool is_generator_expression(const CallNode& node) {
    return node.python && node.user && node.function_name.ends_with("<genexpr>");
}

LoopStatement from_source(const CallNode& node, void*) {
    if (node.python && is_comprehension(node.function_name))
        return {LoopContext::InLoop, node.line, {node.line}};
    return source_files().enclosing_loop(node.file, node.line, node.python);
}

struct FoundLoop {
    uint32_t thread = 0, head = 0, parent = 0, function = 0;
    uint32_t caller = 0; // the innermost frame of the program's own code outside its head, if any
    // The body's extent in addresses: from the lowest to the highest position of its back edges
    // (where the source cannot tell which positions its statement holds).
    uint64_t head_pc = 0, end_pc = 0;
    int loop_line = 0; // its statement (0: none known)
    // Where the statement stands among those enclosing the head's line (0: innermost); -1 none.
    int depth = -1;
    GrowingTimes starts;
    std::vector<uint32_t> run_starts; // iterations (1-based) entered from outside the loop
    uint64_t last_in_body = 0, exit_ts = 0;
    uint64_t allocations = 0;
    int64_t output = -1; // index in finish()'s result

    void start(uint64_t ts, bool run) {
        if (!starts.empty() && starts.back() == ts) {
            // Already started at this time: an outer loop's back edge also makes it a new run.
            if (run && (run_starts.empty() || run_starts.back() != starts.size()))
                run_starts.push_back(static_cast<uint32_t>(starts.size()));
            return;
        }
        starts.push_back(ts);
        if (run) run_starts.push_back(static_cast<uint32_t>(starts.size()));
    }
};

// The loops whose body holds a path, as found at `version` of the thread's loops.
struct BodiesOfPath {
    uint64_t version = ~uint64_t{0};
    std::vector<uint32_t> loops;
};

struct ThreadLoops {
    std::vector<uint32_t> prev;
    std::unordered_map<uint32_t, uint64_t> last_entry;              // user node -> time entered
    std::unordered_map<uint32_t, std::vector<uint32_t>> by_head;    // head node -> loops
    std::unordered_map<uint64_t, std::vector<uint32_t>> by_context; // (parent, function) -> loops
    std::unordered_map<uint64_t, uint64_t> min_pc;                  // (parent, function) -> pc
    std::vector<uint32_t> in_body;                                  // loops holding `prev`
    std::vector<uint32_t> next_in_body;                             // reused by on_alloc
    // Which loops hold a path depends only on the path and on the thread's loops and their
    // bodies' extents, which change only in add_back_edge (a new loop, a longer body): counted
    // here, so a path met again (by its id) reuses what was found for it.
    uint64_t version = 0;
    std::vector<BodiesOfPath> bodies_by_path;
};

// The innermost loop statement enclosing both positions (lines, innermost first), and its place
// in the first's chain; {0, -1} when none does.
std::pair<int, int> common_loop(const std::vector<int>& target, const std::vector<int>& source) {
    for (size_t i = 0; i < target.size(); ++i)
        if (std::find(source.begin(), source.end(), target[i]) != source.end())
            return {target[i], static_cast<int>(i)};
    return {0, -1};
}

} // namespace

struct LoopFinder::State {
    const CallTree& calls;
    LoopOracle oracle;
    void* oracle_context;
    TailCalls tail_calls = nullptr;
    void* tail_calls_context = nullptr;
    std::unordered_map<uint32_t, ThreadLoops> threads;
    std::vector<FoundLoop> loops;
    std::vector<uint32_t> edge_heads; // heads a back edge went to at the current allocation
    // The oracle's answer per call position, asked once: a position's source does not change
    // while a trace is read, and each answer is a file lookup and a vector (a loop's back edge
    // asks at every iteration). Pointers, so that an answer stays put while the table grows.
    std::vector<std::unique_ptr<const LoopStatement>> statements;

    const LoopStatement& statement(uint32_t node) {
        if (node < statements.size() && statements[node]) [[likely]]
            return *statements[node];
        return ask_statement(node);
    }
    [[gnu::noinline]] const LoopStatement& ask_statement(uint32_t node) {
        if (node >= statements.size()) statements.resize(std::max<size_t>(node + 1, calls.size()));
        if (!statements[node])
            statements[node] =
                std::make_unique<const LoopStatement>(oracle(calls[node], oracle_context));
        return *statements[node];
    }

    // Whether execution went back from `before` to `now`, two positions of one function: in the
    // order of their statements where the source shows two different ones (an optimizer lays
    // blocks out in any order: a rotated loop's condition after its body, a rare `if` after the
    // call that follows it), else in the order of their positions.
    bool goes_back(uint32_t now, uint32_t before) {
        const LoopStatement& a = statement(now);
        const LoopStatement& b = statement(before);
        if (a.statement > 0 && b.statement > 0 && a.statement != b.statement)
            return a.statement < b.statement;
        return calls[now].pc < calls[before].pc;
    }

    // Whether loop `l` holds position `node` of its context: the source says where it shows the
    // position's statement and the loop's, else the body's extent.
    bool holds(const FoundLoop& l, uint32_t node) {
        const LoopStatement& s = statement(node);
        if (l.loop_line > 0 && s.statement > 0)
            return std::find(s.chain.begin(), s.chain.end(), l.loop_line) != s.chain.end();
        return calls[node].pc >= l.head_pc && calls[node].pc <= l.end_pc;
    }

    // Where statement `loop_line` stands among those enclosing the head's position (0: innermost);
    // one past them if it does not enclose it.
    int nested_at(uint32_t head, int loop_line) {
        const std::vector<int>& chain = statement(head).chain;
        return static_cast<int>(std::find(chain.begin(), chain.end(), loop_line) - chain.begin());
    }

    uint32_t parent_of(const std::vector<uint32_t>& path, size_t level) const {
        return level ? path[level - 1] : 0;
    }

    // A back edge into `path[level]` from `source` (a node of the same activation), of the loop of
    // statement `loop_line` (`depth` in the head's chain). It starts an iteration of that loop and
    // a new run of every loop of the same head nested inside it.
    void add_back_edge(ThreadLoops& t, uint32_t thread, uint64_t ts,
                       const std::vector<uint32_t>& path, size_t level, uint32_t source,
                       int loop_line, int depth) {
        uint64_t source_pc = calls[source].pc;
        uint32_t head = path[level];
        const CallNode& node = calls[head];
        edge_heads.push_back(head);
        std::vector<uint32_t>& at_head = t.by_head[head];
        FoundLoop* loop = nullptr;
        for (uint32_t id : at_head) {
            FoundLoop& l = loops[id];
            if (l.loop_line == loop_line)
                loop = &l;
            else if (depth >= 0 && l.loop_line > 0 && nested_at(head, l.loop_line) < depth)
                l.start(ts, true);
        }
        if (!loop && loop_line > 0) {
            // The statement already loops back to another of its positions: an iteration that
            // skips the first (a call under an `if`) returns here. One loop, with both heads.
            auto same_context =
                t.by_context.find(context_key(parent_of(path, level), node.function));
            if (same_context != t.by_context.end())
                for (uint32_t id : same_context->second)
                    if (loops[id].loop_line == loop_line) {
                        loop = &loops[id];
                        at_head.push_back(id);
                        if (goes_back(head, loop->head)) loop->head = head;
                        if (node.pc < loop->head_pc) loop->head_pc = node.pc;
                        // Entered before the loop's first iteration was thought to begin (at
                        // its first head's entry): it began there.
                        auto entry = t.last_entry.find(head);
                        if (entry != t.last_entry.end() && entry->second < loop->starts.front())
                            loop->starts.front() = entry->second;
                        ++t.version;
                        break;
                    }
        }
        if (!loop) {
            FoundLoop l;
            l.thread = thread;
            l.head = head;
            l.parent = parent_of(path, level);
            for (size_t i = level; i-- > 0 && !l.caller;)
                if (calls[path[i]].user) l.caller = path[i];
            l.function = node.function;
            l.head_pc = node.pc;
            l.end_pc = node.pc;
            l.loop_line = loop_line;
            l.depth = depth;
            // The iteration it ends began with the last entry into the head, or, where the head
            // was never entered before (a call under an `if`), into the place it came from.
            auto entry = t.last_entry.find(head);
            if (entry == t.last_entry.end()) entry = t.last_entry.find(source);
            if (entry != t.last_entry.end() && entry->second < ts) l.start(entry->second, true);
            uint32_t id = static_cast<uint32_t>(loops.size());
            at_head.push_back(id);
            t.by_context[context_key(l.parent, l.function)].push_back(id);
            loops.push_back(std::move(l));
            loop = &loops.back();
            ++t.version;
        }
        // A back edge in the statements' order can come from below the head's address.
        if (source_pc > loop->end_pc || source_pc < loop->head_pc) {
            loop->end_pc = std::max(loop->end_pc, source_pc);
            loop->head_pc = std::min(loop->head_pc, source_pc);
            ++t.version;
        }
        loop->start(ts, loop->starts.empty());
    }

    // A back edge seen at `level`, from `source` (the previous allocation's node there) to
    // `path[level]`: placed at the innermost frame of the program's own code, from `level`
    // outwards, whose position and the source's share a loop statement.
    void back_edge(ThreadLoops& t, uint32_t thread, uint64_t ts, const std::vector<uint32_t>& path,
                   size_t level, uint32_t source) {
        // Where no line is inside a loop statement (recursion, goto, a parser's miss), the stack
        // has the last word.
        size_t chosen = level;
        int loop_line = 0, depth = -1;
        bool unknown = false;
        for (size_t i = level + 1; i-- > 0;) {
            if (!calls[path[i]].user) continue;
            const LoopStatement& s = statement(path[i]);
            if (s.context == LoopContext::Unknown) {
                chosen = i;
                unknown = true;
                break;
            }
            if (s.context == LoopContext::NotInLoop) continue;
            std::pair<int, int> common{s.chain.front(), 0};
            if (i == level && source != path[i])
                common = common_loop(s.chain, statement(source).chain);
            if (common.second < 0) continue;
            chosen = i;
            std::tie(loop_line, depth) = common;
            break;
        }
        add_back_edge(t, thread, ts, path, chosen, chosen == level ? source : path[chosen],
                      loop_line, depth);
        if (!unknown) return;
        // Without the source, a function that went back to its first position may as well have
        // been called again by a loop around its call: count that loop too, outwards.
        for (size_t i = chosen; i > 0;) {
            const CallNode& n = calls[path[i]];
            auto min = t.min_pc.find(context_key(parent_of(path, i), n.function));
            if (min == t.min_pc.end() || n.pc != min->second) break;
            size_t outer = i;
            while (outer-- > 0 && !calls[path[outer]].user) {
            }
            if (outer >= i) break; // no frame of the program's own code further out
            add_back_edge(t, thread, ts, path, outer, path[outer], 0, -1);
            i = outer;
        }
    }

    // A library's function went back from `before` to `path[level]` where its source shows no
    // loop holding both positions: it was called again, not looped (a model whose forward makes
    // two tensors, run once per iteration of the program's loop by one call). Which call ran
    // again: the innermost frame of the program's own code further out, unless a frame of a
    // library's source between them sits in a loop of its own (a framework running its layers),
    // or the source of either is not readable. That frame's index, or -1.
    int64_t called_again(const std::vector<uint32_t>& path, size_t level, uint32_t before) {
        const LoopStatement& now = statement(path[level]);
        const LoopStatement& then = statement(before);
        if (now.context == LoopContext::Unknown || then.context == LoopContext::Unknown ||
            common_loop(now.chain, then.chain).second >= 0)
            return -1;
        for (size_t i = level; i-- > 0;) {
            const CallNode& n = calls[path[i]];
            if (n.user) return static_cast<int64_t>(i);
            if (n.python && statement(path[i]).context != LoopContext::NotInLoop) return -1;
        }
        return -1;
    }

    void on_alloc(uint32_t thread, uint64_t ts, const std::vector<uint32_t>& path,
                  uint32_t path_id) {
        ThreadLoops& t = threads[thread];
        const std::vector<uint32_t>& prev = t.prev;
        edge_heads.clear();
        // The common prefix, found from the innermost frame they could share outwards: a path is a
        // chain of nodes (each the caller's node of the next), so the deepest node the two share
        // ends it, and consecutive allocations of a thread usually share all but a few frames.
        size_t d = std::min(path.size(), prev.size());
        while (d > 0 && path[d - 1] != prev[d - 1])
            --d;
        if (!prev.empty()) {
            if (d == path.size() && d == prev.size()) {
                // The very same stack again: the innermost frame of the program's own code ran
                // that call again.
                for (size_t i = path.size(); i-- > 0;)
                    if (calls[path[i]].user) {
                        back_edge(t, thread, ts, path, i, path[i]);
                        break;
                    }
            } else if (d < path.size() && d < prev.size()) {
                const CallNode& now = calls[path[d]];
                const CallNode& before = calls[prev[d]];
                if (now.user && before.user && now.function == before.function) {
                    if (goes_back(path[d], prev[d])) back_edge(t, thread, ts, path, d, prev[d]);
                } else if (!now.user && !before.user && now.function == before.function) {
                    const int64_t caller =
                        goes_back(path[d], prev[d]) ? called_again(path, d, prev[d]) : -1;
                    if (caller >= 0)
                        back_edge(t, thread, ts, path, static_cast<size_t>(caller),
                                  path[static_cast<size_t>(caller)]);
                } else if (now.function != before.function && d > 0 && (now.user || before.user) &&
                           calls[path[d - 1]].user &&
                           !(tail_calls &&
                             tail_calls(calls[path[d - 1]], before, now, tail_calls_context))) {
                    back_edge(t, thread, ts, path, d - 1, path[d - 1]);
                }
            }
        }
        // A generator expression resumed where it has no loop yet: the next step of its loop.
        // Fed to a builtin that calls back into Python (`map(f, (g(x) for x in xs))`), its steps
        // alternate with the calls they feed and never allocate twice in a row. Once the loop is
        // there, entering it starts its iterations as for any head (below).
        // Resumed: the last stack had no frame of its function past the common part (a step
        // going on from one of its positions to the next is not resumed).
        for (size_t i = d; i < path.size(); ++i) {
            const CallNode& n = calls[path[i]];
            if (!is_generator_expression(n) || !t.last_entry.count(path[i]) ||
                t.by_head.count(path[i]) ||
                std::find(edge_heads.begin(), edge_heads.end(), path[i]) != edge_heads.end())
                continue;
            bool resumed = true;
            for (size_t j = d; j < prev.size() && resumed; ++j)
                resumed = calls[prev[j]].function != n.function;
            if (resumed) back_edge(t, thread, ts, path, i, path[i]);
        }
        // Entering a head from elsewhere (not through a back edge to it) starts a run of each of
        // its loops.
        for (size_t i = d; i < path.size(); ++i) {
            uint32_t node = path[i];
            // Only a frame of the program's own code can be a head (add_back_edge's callers).
            if (!calls[node].user) continue;
            t.last_entry[node] = ts;
            auto head = t.by_head.find(node);
            if (head == t.by_head.end() ||
                std::find(edge_heads.begin(), edge_heads.end(), node) != edge_heads.end())
                continue;
            // Not from a place of the same activation inside the loop's statement, though: that
            // goes on within an iteration (from a call under an `if` before the head).
            const std::vector<int>* from = nullptr;
            if (i == d && d < prev.size() && calls[prev[d]].user &&
                calls[prev[d]].function == calls[node].function)
                from = &statement(prev[d]).chain;
            for (uint32_t id : head->second) {
                FoundLoop& l = loops[id];
                if (from && l.loop_line > 0 &&
                    std::find(from->begin(), from->end(), l.loop_line) != from->end())
                    continue;
                l.start(ts, true);
            }
        }
        std::vector<uint32_t>& in_body = t.next_in_body;
        in_body.clear();
        BodiesOfPath* known = nullptr;
        if (path_id != LoopFinder::kUnnamedPath) {
            if (path_id >= t.bodies_by_path.size()) t.bodies_by_path.resize(path_id + 1);
            known = &t.bodies_by_path[path_id];
        }
        if (known && known->version == t.version) {
            // The path's lowest positions are in min_pc since it was last met (a minimum).
            in_body = known->loops;
        } else {
            for (size_t i = 0; i < path.size(); ++i) {
                const CallNode& n = calls[path[i]];
                if (!n.user) continue;
                uint64_t key = context_key(parent_of(path, i), n.function);
                auto [min, fresh] = t.min_pc.try_emplace(key, n.pc);
                if (!fresh) min->second = std::min(min->second, n.pc);
                auto loops_here = t.by_context.find(key);
                if (loops_here == t.by_context.end()) continue;
                for (uint32_t id : loops_here->second)
                    if (holds(loops[id], path[i])) in_body.push_back(id);
            }
            if (known) {
                known->loops = in_body;
                known->version = t.version;
            }
        }
        for (uint32_t id : in_body) {
            loops[id].last_in_body = ts;
            loops[id].allocations += 1;
        }
        for (uint32_t id : t.in_body)
            if (std::find(in_body.begin(), in_body.end(), id) == in_body.end())
                loops[id].exit_ts = ts;
        std::swap(t.in_body, t.next_in_body);
        // Only the frames past the common prefix differ.
        if (d != path.size() || d != prev.size()) {
            t.prev.resize(path.size());
            std::copy(path.begin() + static_cast<ptrdiff_t>(d), path.end(),
                      t.prev.begin() + static_cast<ptrdiff_t>(d));
        }
    }
};

LoopFinder::LoopFinder(const CallTree& calls, LoopOracle oracle, void* oracle_context)
    : state_(new State{
          calls, oracle ? oracle : &from_source, oracle_context, {}, {}, {}, {}, {}, {}}) {}

void LoopFinder::set_tail_calls(TailCalls tail_calls, void* context) {
    state_->tail_calls = tail_calls;
    state_->tail_calls_context = context;
}

LoopFinder::~LoopFinder() {
    delete state_;
}

void LoopFinder::on_alloc(uint32_t thread, uint64_t ts, const std::vector<uint32_t>& path,
                          uint32_t path_id) {
    state_->on_alloc(thread, ts, path, path_id);
}

std::vector<Loop> LoopFinder::finish(uint64_t end_ts) {
    std::vector<Loop> out;
    for (FoundLoop& f : state_->loops) {
        if (f.starts.size() < 2) continue;
        Loop l;
        l.id = static_cast<uint32_t>(out.size());
        l.source = "inferred";
        l.thread = f.thread;
        l.head = f.head;
        l.body_end_pc = f.end_pc;
        l.loop_line = f.loop_line;
        l.head_outside_loops =
            f.loop_line == 0 && state_->statement(f.head).context == LoopContext::NotInLoop;
        // Taken, not copied: a long job's loop has millions of starts.
        l.starts = f.starts.take();
        l.run_starts = std::move(f.run_starts);
        l.runs_to_end = f.exit_ts <= f.last_in_body;
        l.end_ts = l.runs_to_end ? std::max(end_ts, f.last_in_body) : f.exit_ts;
        l.allocations = f.allocations;
        f.output = l.id;
        out.push_back(std::move(l));
    }
    fold_echoes(out);
    return out;
}

// Without the source a restart counts for every caller outwards (back_edge), so one loop of a
// library's thread (PyTorch's autograd engine: every stack the same, no line readable) came out as
// one loop per frame, down to start_thread and clone3, each with the same iterations. Where a
// loop's head is further out on the chain of another's and the two have the same iterations, the
// same exit and hold the same allocations, it is that loop seen from a caller: it holds no site
// the inner one does not (loop_of looks from the innermost frame out), and is listed as the inner.
void LoopFinder::fold_echoes(std::vector<Loop>& loops) {
    const CallTree& calls = state_->calls;
    auto depth = [&](uint32_t node) {
        size_t d = 0;
        for (; node; node = calls[node].parent)
            ++d;
        return d;
    };
    auto ancestor = [&](uint32_t outer, uint32_t inner) {
        for (inner = calls[inner].parent; inner; inner = calls[inner].parent)
            if (inner == outer) return true;
        return false;
    };
    std::vector<size_t> order;
    for (size_t i = 0; i < loops.size(); ++i)
        if (loops[i].source == "inferred" && loops[i].loop_line == 0) order.push_back(i);
    auto key = [&](size_t i) {
        const Loop& l = loops[i];
        return std::make_tuple(l.thread, l.iterations(), l.starts.front(), l.starts.back(),
                               l.allocations, l.end_ts, l.runs_to_end);
    };
    // Equal keys together, the deepest head first in each: an echo folds into a loop kept before.
    std::vector<size_t> depths(loops.size());
    for (size_t i : order)
        depths[i] = depth(loops[i].head);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::make_tuple(key(a), depths[b], a) < std::make_tuple(key(b), depths[a], b);
    });
    std::vector<int64_t> folded_into(loops.size(), -1);
    for (size_t begin = 0, end; begin < order.size(); begin = end) {
        for (end = begin + 1; end < order.size() && key(order[end]) == key(order[begin]); ++end) {
        }
        for (size_t i = begin + 1; i < end; ++i)
            for (size_t k = begin; k < i; ++k) {
                size_t outer = order[i], inner = order[k];
                if (folded_into[inner] >= 0 || !ancestor(loops[outer].head, loops[inner].head) ||
                    loops[outer].starts != loops[inner].starts)
                    continue;
                folded_into[outer] = static_cast<int64_t>(inner);
                break;
            }
    }
    if (std::none_of(folded_into.begin(), folded_into.end(), [](int64_t k) { return k >= 0; }))
        return;
    std::vector<uint32_t> new_id(loops.size());
    std::vector<Loop> kept;
    for (size_t i = 0; i < loops.size(); ++i) {
        if (folded_into[i] >= 0) continue;
        new_id[i] = static_cast<uint32_t>(kept.size());
        kept.push_back(std::move(loops[i]));
        kept.back().id = new_id[i];
    }
    for (size_t i = 0; i < loops.size(); ++i)
        if (folded_into[i] >= 0) new_id[i] = new_id[static_cast<size_t>(folded_into[i])];
    for (FoundLoop& f : state_->loops)
        if (f.output >= 0) f.output = new_id[static_cast<size_t>(f.output)];
    loops = std::move(kept);
}

int64_t LoopFinder::loop_of(uint32_t thread, const std::vector<uint32_t>& path) const {
    auto t = state_->threads.find(thread);
    if (t == state_->threads.end()) return -1;
    for (size_t i = path.size(); i-- > 0;) {
        const CallNode& n = state_->calls[path[i]];
        if (!n.user) continue;
        auto loops = t->second.by_context.find(context_key(i ? path[i - 1] : 0, n.function));
        if (loops == t->second.by_context.end()) continue;
        // The tightest: of two statements, the later one (both enclose the position, so it is
        // nested in the other; a loop's first head can come before a nested loop's); else the
        // latest head, then the shortest body, then the innermost statement.
        auto tighter = [](const FoundLoop& a, const FoundLoop& b) {
            if (a.loop_line > 0 && b.loop_line > 0 && a.loop_line != b.loop_line)
                return a.loop_line > b.loop_line;
            return std::tie(a.head_pc, b.end_pc, b.depth) > std::tie(b.head_pc, a.end_pc, a.depth);
        };
        const FoundLoop* best = nullptr;
        for (uint32_t id : loops->second) {
            const FoundLoop& l = state_->loops[id];
            if (l.output < 0 || !state_->holds(l, path[i])) continue;
            if (!best || tighter(l, *best)) best = &l;
        }
        if (best) return best->output;
    }
    return -1;
}

int64_t LoopFinder::loop_run_by(uint32_t thread, const std::vector<uint32_t>& path) const {
    // From the innermost frame of the program's own code outwards: `map(lambda x: model(x),
    // (load(b) for b in batches))` runs the generator's loop from the statement's frame, and the
    // lambda it feeds is a frame of the program's further in.
    for (size_t n = path.size(); n-- > 0;) {
        if (!state_->calls[path[n]].user) continue;
        const FoundLoop* best = nullptr;
        for (const FoundLoop& l : state_->loops)
            if (l.thread == thread && l.caller == path[n] && l.output >= 0 &&
                (!best || l.allocations > best->allocations))
                best = &l;
        if (best) return best->output;
    }
    return -1;
}

} // namespace gpuleak::analyzer
