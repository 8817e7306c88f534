// A verdict per (site, loop) from the live memory at the end of each iteration of that loop, after
// --warmup iterations (analysis/aggregate/loop_lifetimes.h):
//   leak          the number of live allocations keeps rising through the loop (the last third of
//                 its iterations never drops to what the first third reached, in at least three
//                 steps, and a line fits the counts: R^2 = confidence) and most of it is still held
//                 when the program's teardown begins: bytes per iteration is the line's slope;
//                 or a rise begun in the last third and still under way at its end, at least
//                 kAccumulationSteps steps above anything the first two thirds held (a leak begun
//                 late in the run), its slope read from where it began;
//   accumulation  the same rise, or kAccumulationSteps rises in a row (seven iterations or more),
//                 then released before the teardown (a list filled through an epoch and cleared
//                 after it): bounded by the loop's length, which is what makes a long epoch die;
//   growth        the count stays bounded but the bytes rise the same way: sizes grow;
//   retained      something outlives its iteration but stays bounded (weights, a cache of N
//                 entries, the last loop variable, a sawtooth released every few iterations);
//   transient     everything is freed within the iteration that allocated it.
// A loop still running at the teardown is judged without its last iteration, which the program's
// end cut short (its frees and the exit's are one). A leak is "held at the teardown" when at
// least half of what it had accumulated is still live at the program's last allocation. With fewer
// than three iterations to compare there is no trend: pairs that outlive an iteration or hold
// memory at the teardown are retained, the rest transient. Memory allocated outside every loop is
// retained if it is held at the teardown and transient otherwise; without any loop in the trace
// nothing is judged (verdict "none"). A site's verdict is the most severe of its pairs (one per
// thread it allocated in), with two exceptions: a leak in a loop that other threads ran too, where
// the same site rose as far in one of them and was released before this loop began, is what it is
// there (the end of the trace cut it short: a pool's worker in the last epoch). And one in a
// loop that only builds is retained: a loop found in the stacks in which nothing made while it ran
// (in it, in loops nested in it or in those it nests in) was freed before it ended, followed on its
// thread by a loop of at least three iterations and as many allocations that ran with it held
// unchanged, or run once inside one call from a line in no loop statement (a library's loop:
// `model.cuda()` moving each parameter). That is how a model's layers are built (`for i in
// range(n_layers): layers.append(Block())`), bounded by a count of configuration rather than of
// data; a loop over data that frees nothing (an evaluation keeping every output with its graph, run
// before the training) reads the same, and its hint says so. Such a loop's accumulation (what it
// made, released after the later loop's last iteration began: a model freed when the function
// that trained it returns) is retained the same way. Last, a leak of a loop seen only
// through the segments of PyTorch's caching allocator (its default) is retained when the process
// then ran on for three times as long as the loop had been growing, and at least a second, without
// it growing again: the cache keeps its segments for good and reuses them unseen, so the first
// steps of any training (activations kept for the backward pass, an optimizer's state, a step
// that finds the cache taken by that state) ask for segments and read as a leak, while the steps
// after them show nothing at all. A leak asks for more through the whole run. Nothing else reaches
// the driver, so the "ran on" is the process's exit (a trace without an end record keeps the
// leak); a loop that leaked early and was followed by a long one reusing the cache reads the same.
// PyTorch's pinned-memory cache is read alike, except that its growing ends with its last block of
// a power of two it had made before: it keeps blocks per power of two, so a block of a new one is
// a new batch shape (an epoch's shorter last batch, pinned late in the run), not one more batch
// held.
// And a leak of such a loop whose every segment was larger than all before it is growth: the cache
// could not serve a larger request from the smaller blocks freed before it (a batch or sequence
// growing each step), and what it reserves grows with the largest; tensors kept while growing
// read the same.
#pragma once

#include <vector>

#include "analysis/aggregate/loop_lifetimes.h"
#include "analysis/loops.h"
#include "analysis/report.h"

namespace gpuleak::analyzer {

inline constexpr size_t kAccumulationSteps = 6;
// A loop seen only through a caching allocator's segments is that cache warming up (above) when
// the process ran on this many times the loop's span after it, and at least this long (ns).
inline constexpr uint64_t kCacheQuietFactor = 3;
inline constexpr uint64_t kCacheQuietFloorNs = 1'000'000'000;

struct Judgement {
    Verdict verdict = Verdict::None;
    double growth_bytes_per_iteration = 0;
    double confidence = 0;
    uint64_t accumulated_bytes = 0;
    // Retained although its loop kept it (see above): why, and the later loop it was held
    // unchanged through (HeldThroughLaterLoop; -1 otherwise).
    RetainedBecause retained_because = RetainedBecause::None;
    int64_t held_through = -1;
};

Judgement judge(const SiteLoopStats& pair, const Loop& loop, uint32_t warmup);

// Judges every pair and gives each site of `report` (sized already) its verdict, loop and series.
void decide_verdicts(const std::vector<SiteLoopStats>& pairs, const Loops& loops, Report& report);

// Live bytes per iteration for a sparkline: at most `points` values (max of each bucket).
std::vector<uint64_t> live_bytes_by_iteration(const SiteStats& site, uint32_t iterations,
                                              size_t points);

} // namespace gpuleak::analyzer
