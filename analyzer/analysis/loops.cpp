// The loop pass: every allocation's site and thread fed to the loop finder (loop_finder.cpp),
// loops given by markers or --iteration-site, rounds of threads, and what the report says of them.
#include "analysis/loops.h"

#include <algorithm>
#include <array>
#include <map>

#include "analysis/report.h"
#include "analysis/site_cache.h"
#include "analysis/thread_rounds.h"
#include "common/format_util.h"
#include "model/site_table.h"
#include "trace/event_stream.h"

namespace gpuleak::analyzer {

bool Loops::pooled(uint32_t thread) const {
    for (const Loop& l : loops)
        if (l.thread == thread && l.source == "inferred") return false;
    return true;
}

bool Loops::pools(uint32_t loop, uint32_t thread) const {
    return loops[loop].source == "threads" || pooled(thread);
}

int64_t Loops::main_loop() const {
    // Marked iterations are the user's own word for what an iteration is; rounds of threads are
    // the main loop only where the stacks show none.
    int64_t best = -1;
    auto rank = [](const Loop& l) {
        return l.source == "inferred" ? 1 : l.source == "threads" ? 0 : 2;
    };
    for (const Loop& l : loops)
        if (best < 0 || rank(l) > rank(loops[best]) ||
            (rank(l) == rank(loops[best]) && l.allocations > loops[best].allocations))
            best = l.id;
    return best;
}

namespace {

bool passes_through(const Site& site, const std::string& location) {
    size_t colon = location.rfind(':');
    if (colon == std::string::npos) return false;
    std::string file = location.substr(0, colon);
    int line = std::atoi(location.c_str() + colon + 1);
    for (const Frame& f : site.frames) {
        if (f.line != line || f.file.size() < file.size()) continue;
        // "eval.py:42" matches /home/u/proj/eval.py; a path given by the user must match its tail.
        if (f.file.compare(f.file.size() - file.size(), file.size(), file) == 0 &&
            (f.file.size() == file.size() || f.file[f.file.size() - file.size() - 1] == '/'))
            return true;
    }
    return false;
}

struct SiteThread {
    uint32_t site, thread;
    uint64_t allocations = 0;
    // The times of its first allocations, and of its last ones (a ring; allocation k at
    // k % size): enough to count those before a loop's first iteration and in its last one where
    // a loop holds a few per iteration.
    std::array<uint64_t, 4> first{}, recent{};

    void on_alloc(uint64_t ts) {
        if (allocations < first.size()) first[allocations] = ts;
        recent[allocations % recent.size()] = ts;
        allocations += 1;
    }
    uint64_t first_ts() const { return first[0]; }
    uint64_t last_ts() const { return recent[(allocations - 1) % recent.size()]; }
    // How many of its allocations came before `ts`; first.size() + 1 where all it keeps did.
    uint64_t allocations_before(uint64_t ts) const {
        return count_of(first, [&](uint64_t t) { return t < ts; });
    }
    // How many came after `ts`; recent.size() + 1 where all it keeps did.
    uint64_t allocations_after(uint64_t ts) const {
        return count_of(recent, [&](uint64_t t) { return t > ts; });
    }

private:
    template <class Pred> uint64_t count_of(const std::array<uint64_t, 4>& times, Pred pred) const {
        const uint64_t kept = std::min<uint64_t>(allocations, times.size());
        uint64_t n = 0;
        for (uint64_t i = 0; i < kept; ++i)
            n += pred(times[i]);
        return n == kept && kept < allocations ? times.size() + 1 : n;
    }
};

} // namespace

// The median of the gaps between consecutive starts (ascending): the gap of rank size/2 among
// them, as std::nth_element would place it. Found 16 bits at a time from the top, counting the
// gaps that share the bits found so far, so that a loop marked at each of millions of iterations
// needs no copy of its gaps.
uint64_t median_gap(const std::vector<uint64_t>& starts) {
    size_t rank = (starts.size() - 1) / 2;
    std::vector<uint32_t> counts(size_t{1} << 16);
    uint64_t found = 0;
    for (int shift = 48; shift >= 0; shift -= 16) {
        std::fill(counts.begin(), counts.end(), 0);
        uint64_t known = shift == 48 ? 0 : ~uint64_t{0} << (shift + 16);
        for (size_t i = 1; i < starts.size(); ++i) {
            uint64_t gap = starts[i] - starts[i - 1];
            if ((gap & known) == found) counts[(gap >> shift) & 0xffff] += 1;
        }
        uint64_t digit = 0;
        while (rank >= counts[digit])
            rank -= counts[digit++];
        found |= digit << shift;
    }
    return found;
}

struct LoopPass::State {
    LoadedTrace& trace;
    SiteTable& sites;
    const LoopOptions& options;
    Loops out;
    LoopFinder finder;
    SiteCache cache;
    std::vector<std::vector<uint64_t>> site_starts;
    std::vector<std::vector<int8_t>> passes;
    std::unordered_map<uint64_t, SiteThread> seen;
    std::vector<uint64_t> order; // site-thread keys in order of first allocation
    // Per inferred loop, the latest time its iterations can time another thread's allocations
    // (timing_loop); 0 where they cannot. Filled on first use.
    std::vector<uint64_t> timing_ends;
    std::vector<bool> shows_every_iteration; // per inferred loop: some site of its own thread
                                             // is no cache's block
    ThreadSpans threads;

    State(LoadedTrace& t, SiteTable& s, const LoopOptions& o, bool check)
        : trace(t), sites(s), options(o), finder(s.calls()), cache(t, s, check),
          site_starts(o.site_locations.size()), passes(o.site_locations.size()) {
        out.warmup = o.warmup;
        finder.set_tail_calls(
            [](const CallNode& call, const CallNode& caller, const CallNode& callee, void* table) {
                return static_cast<SiteTable*>(table)->tail_calls(call, caller, callee);
            },
            &s);
    }

    void on_event(const Event& e) {
        out.end_ts = e.record->ts;
        threads.on_event(e.thread, e.lane, e.record->ts);
        if (e.record->tag != format::Tag::Alloc) return;
        uint64_t ts = e.record->ts;
        uint32_t site = cache.site(e.thread, e.record->stack, e.record->py_stack);
        out.teardown_ts = ts;
        if (threads.needs_routine(e.thread))
            threads.on_first_alloc(e.thread, sites.calls(), sites.site(site).path);
        finder.on_alloc(e.lane, ts, sites.site(site).path, site);
        uint64_t key = uint64_t{site} << 32 | e.lane;
        auto [st, fresh] = seen.try_emplace(key, SiteThread{site, e.lane});
        if (fresh) order.push_back(key);
        st->second.on_alloc(ts);
        for (size_t i = 0; i < options.site_locations.size(); ++i) {
            if (site >= passes[i].size()) passes[i].resize(site + 1, -1);
            if (passes[i][site] < 0)
                passes[i][site] = passes_through(sites.site(site), options.site_locations[i]);
            if (passes[i][site] && (site_starts[i].empty() || site_starts[i].back() != ts))
                site_starts[i].push_back(ts);
        }
    }

    // Of the inferred loops [0, inferred) of threads other than `st`'s, the one with most
    // allocations whose iterations hold all of `st`'s allocations, not a loop seen only in its
    // first moments; -1 if none does. Its last iteration may run long (its backward pass, a slow
    // minute of the machine): any loop holds up to three typical iterations, or as long as it had
    // run, after its last start. One whose every iteration shows (not seen through a cache) holds
    // to its end a pair that allocated no more in that last iteration than in a typical one, and
    // takes a pair that allocated no more than that before its first iteration (a warm-up step:
    // the same stacks on the library's thread).
    int64_t timing_loop(size_t inferred, const SiteThread& st) {
        if (timing_ends.empty()) {
            timing_ends.resize(inferred);
            for (size_t i = 0; i < inferred; ++i) {
                const Loop& l = out.loops[i];
                if (l.starts.size() < 2) continue;
                const uint64_t slack =
                    std::max(3 * median_gap(l.starts), l.starts.back() - l.starts.front());
                timing_ends[i] = std::min(l.end_ts, l.starts.back() + slack);
            }
            shows_every_iteration.assign(inferred, false);
            for (const auto& [key, own] : seen) {
                int64_t loop = finder.loop_of(own.thread, sites.site(own.site).path);
                if (loop >= 0 && static_cast<size_t>(loop) < inferred &&
                    !sites.site(own.site).in_pytorch_cache())
                    shows_every_iteration[loop] = true;
            }
        }
        int64_t best = -1;
        for (size_t i = 0; i < inferred; ++i) {
            const Loop& l = out.loops[i];
            if (l.thread == st.thread || !timing_ends[i]) continue;
            const uint64_t per_iteration = (st.allocations + l.iterations() - 1) / l.iterations();
            const bool visible = shows_every_iteration[i];
            const bool from_start =
                st.first_ts() >= l.starts.front() ||
                (visible && st.allocations_before(l.starts.front()) <= per_iteration);
            const bool to_end = st.last_ts() <= timing_ends[i] ||
                                (visible && st.last_ts() <= l.end_ts &&
                                 st.allocations_after(l.starts.back()) <= per_iteration);
            if (!from_start || !to_end) continue;
            if (best < 0 || l.allocations > out.loops[best].allocations)
                best = static_cast<int64_t>(i);
        }
        return best;
    }

    Loops finish() {
        out.markers = trace.marker_count;
        out.end_ts = std::max(out.end_ts, trace.exit_ts);
        out.loops = finder.finish(out.end_ts);
        // A loop still running when the program's last allocation came ends there: what follows
        // is the program's teardown, which frees what the loop held.
        for (Loop& l : out.loops)
            if (l.runs_to_end) l.end_ts = out.teardown_ts + 1;
        size_t inferred = out.loops.size();
        auto add_marked = [&](std::string source, std::string name, std::vector<uint64_t> starts) {
            if (starts.empty()) return;
            Loop l;
            l.id = static_cast<uint32_t>(out.loops.size());
            l.source = std::move(source);
            l.name = std::move(name);
            l.starts = std::move(starts);
            l.run_starts = {1};
            // Its last iteration lasts as long as a typical one (several marked loops one after
            // another must not overlap), the program's teardown at the latest.
            uint64_t end = out.teardown_ts + 1;
            if (l.starts.size() > 1) end = std::min(end, l.starts.back() + median_gap(l.starts));
            l.end_ts = std::max(end, l.starts.back());
            l.runs_to_end = l.end_ts == out.teardown_ts + 1;
            out.loops.push_back(std::move(l));
        };
        // One loop per name, in the order of the names; the times are taken over, not copied.
        std::vector<LoadedTrace::MarkerSeries*> by_name;
        for (LoadedTrace::MarkerSeries& m : trace.markers)
            by_name.push_back(&m);
        std::sort(by_name.begin(), by_name.end(),
                  [](const auto* a, const auto* b) { return a->name < b->name; });
        for (LoadedTrace::MarkerSeries* m : by_name)
            add_marked("markers", m->name, m->ts.take());
        for (size_t i = 0; i < options.site_locations.size(); ++i)
            add_marked("site", options.site_locations[i], std::move(site_starts[i]));
        // Of the loops [from, to), the one whose span holds `ts` with the largest `key`, the first
        // of those tied; -1 if none holds it.
        auto spanning = [&](size_t from, size_t to, uint64_t ts, auto key) {
            int64_t best = -1;
            for (size_t i = from; i < to; ++i) {
                const Loop& l = out.loops[i];
                if (ts < l.starts.front() || ts > l.end_ts) continue;
                if (best < 0 || key(l) > key(out.loops[best])) best = static_cast<int64_t>(i);
            }
            return best;
        };
        auto iterations = [](const Loop& l) { return l.iterations(); };
        auto allocations = [](const Loop& l) { return l.allocations; };
        std::unordered_map<uint32_t, bool> library_threads; // thread -> all its sites are
        for (uint64_t key : order) {
            const SiteThread& st = seen[key];
            auto [library, fresh] = library_threads.try_emplace(st.thread, true);
            library->second = library->second && sites.site(st.site).library_thread;
            // A marked loop whose span holds the first allocation; the finer one if several do.
            int64_t loop = spanning(inferred, out.loops.size(), st.first_ts(), iterations);
            // A library's native thread (PyTorch's autograd engine) works for the program's loops:
            // timed by the one of another thread whose iterations hold all its allocations (not
            // one seen only through a cache's first growth, say); by its own, the library's, only
            // where none does.
            if (loop < 0 && sites.site(st.site).library_thread) loop = timing_loop(inferred, st);
            if (loop < 0) loop = finder.loop_of(st.thread, sites.site(st.site).path);
            // Allocated by the very statement that runs a loop in what it calls, while that loop
            // runs (the additions of `sum(model(x) for x in xs)`, made between the generator's
            // steps): timed by it.
            if (loop < 0) {
                int64_t run = finder.loop_run_by(st.thread, sites.site(st.site).path);
                if (run >= 0 && st.first_ts() >= out.loops[run].starts.front() &&
                    st.first_ts() <= out.loops[run].end_ts)
                    loop = run;
            }
            // A thread without loops: the inferred loop (of another thread) whose span holds its
            // first allocation, the one with most allocations where several do.
            if (loop < 0 && out.pooled(st.thread))
                loop = spanning(0, inferred, st.first_ts(), allocations);
            if (loop >= 0) out.by_site_thread[key] = static_cast<uint32_t>(loop);
            if (loop >= 0 && static_cast<size_t>(loop) >= inferred)
                out.loops[loop].allocations += st.allocations;
        }
        for (size_t i = 0; i < inferred; ++i) {
            auto library = library_threads.find(static_cast<uint32_t>(out.loops[i].thread));
            out.loops[i].library_thread = library != library_threads.end() && library->second;
        }
        add_thread_rounds();
        mark_loops_seen_through_cache();
        return std::move(out);
    }

    void mark_loops_seen_through_cache() {
        std::vector<int> segments(out.loops.size(), -1); // -1: no site yet; 0: a tensor's too
        for (const auto& [key, loop] : out.by_site_thread) {
            bool segment = sites.site(static_cast<uint32_t>(key >> 32)).in_pytorch_cache();
            segments[loop] = (segments[loop] != 0) && segment;
        }
        for (Loop& l : out.loops)
            l.seen_through_cache = segments[l.id] == 1;
    }

    // The deepest frame of the program's own code that every allocation of the routine's threads
    // (`keys`: their site-thread pairs) passes through (the routine's call into its work, past the
    // thread library's frames inlined into the program), else the routine's frame itself.
    uint32_t routine_name(uint32_t routine, const std::vector<uint64_t>& keys) {
        std::vector<uint32_t> common = sites.site(seen[keys.front()].site).path;
        for (uint64_t key : keys) {
            const std::vector<uint32_t>& path = sites.site(seen[key].site).path;
            size_t n = 0;
            while (n < common.size() && n < path.size() && common[n] == path[n])
                ++n;
            common.resize(n);
        }
        for (size_t i = common.size(); i-- > 0;)
            if (sites.calls()[common[i]].user) return common[i];
        return routine;
    }

    // What no loop holds, of threads started in rounds (analysis/thread_rounds.h), belongs to the
    // loop of those rounds.
    void add_thread_rounds() {
        std::unordered_map<uint32_t, uint32_t> routine_of; // lane -> routine
        std::map<uint32_t, std::vector<ThreadSpan>> threads_of;
        for (const ThreadSpan& t : threads.spans()) {
            if (!t.routine) continue;
            routine_of[t.lane] = t.routine;
            threads_of[t.routine].push_back(t);
        }
        struct Pairs {
            std::vector<uint64_t> all, unplaced; // site-thread keys of the routine's threads
        };
        std::map<uint32_t, Pairs> pairs_of;
        for (uint64_t key : order) {
            auto routine = routine_of.find(seen[key].thread);
            if (routine == routine_of.end()) continue;
            Pairs& p = pairs_of[routine->second];
            p.all.push_back(key);
            if (!out.by_site_thread.count(key)) p.unplaced.push_back(key);
        }
        for (auto& [routine, pairs] : pairs_of) {
            if (pairs.unplaced.empty()) continue;
            Rounds rounds = find_rounds(threads_of[routine]);
            if (!rounds.repeat()) continue;
            Loop l;
            l.id = static_cast<uint32_t>(out.loops.size());
            l.source = "threads";
            l.head = routine_name(routine, pairs.all);
            l.starts = std::move(rounds.starts);
            l.run_starts = {1};
            l.end_ts = std::min(rounds.last_ts, out.teardown_ts) + 1;
            l.runs_to_end = l.end_ts == out.teardown_ts + 1;
            for (uint64_t key : pairs.unplaced) {
                out.by_site_thread[key] = l.id;
                l.allocations += seen[key].allocations;
            }
            out.loops.push_back(std::move(l));
        }
    }
};

LoopPass::LoopPass(LoadedTrace& trace, SiteTable& sites, const LoopOptions& options,
                   bool check_definitions)
    : state_(new State(trace, sites, options, check_definitions)) {}

LoopPass::~LoopPass() {
    delete state_;
}

void LoopPass::on_event(const Event& e) {
    state_->on_event(e);
}

void LoopPass::passed_over(const PassedOver& passed) {
    state_->out.end_ts = std::max(state_->out.end_ts, passed.last_ts);
    for (const PassedOver::Lane& l : passed.lanes)
        state_->threads.widen(l.lane, l.first_ts, l.last_ts);
}

bool LoopPass::definitions_complete() const {
    return !state_->cache.missing_definitions();
}

Loops LoopPass::finish() {
    return state_->finish();
}

Loops find_loops(LoadedTrace& trace, SiteTable& sites, const LoopOptions& options) {
    LoopPass pass(trace, sites, options);
    for_each_event(trace, [&](const Event& e) { pass.on_event(e); });
    return pass.finish();
}

std::vector<LoopSummary> summarize_loops(const Loops& loops, const CallTree& calls) {
    std::vector<LoopSummary> out;
    for (const Loop& l : loops.loops) {
        LoopSummary s;
        s.id = l.id;
        s.source = l.source;
        s.name = l.name;
        s.thread = l.thread;
        if (l.source == "inferred" || l.source == "threads") {
            const CallNode& head = calls[l.head];
            s.function = source_function(head.function_name, head.python);
            s.python = head.python;
            s.file = head.file;
            s.line = head.line;
        }
        s.loop_line = l.loop_line;
        s.iterations = l.iterations();
        s.seen_through_cache = l.seen_through_cache;
        s.start_s = l.starts.empty() ? 0 : static_cast<double>(l.starts.front()) / 1e9;
        s.end_s = static_cast<double>(l.end_ts) / 1e9;
        s.allocations = l.allocations;
        s.library_thread = l.library_thread;
        out.push_back(std::move(s));
    }
    for (const auto& [key, loop] : loops.by_site_thread)
        out[loop].sites += 1;
    return out;
}

} // namespace gpuleak::analyzer
