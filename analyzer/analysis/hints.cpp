#include "analysis/hints.h"

#include <algorithm>
#include <cstdio>

#include "analysis/verdicts.h"
#include "common/format_util.h"
#include "common/text_search.h"
#include "model/caching_allocator.h"

namespace gpuleak::analyzer {
namespace {

// `needles` in lower case.
bool any_frame(const Site& site, const std::vector<const char*>& needles, bool own_code = false) {
    for (const Frame& f : site.frames) {
        if (own_code && f.origin != FrameOrigin::User) continue;
        for (const char* n : needles)
            if (contains_lowercase(f.function, n) || contains_lowercase(f.file, n)) return true;
    }
    return false;
}

bool forward_pass(const Site& site) {
    return any_frame(site, {"forward", "_call_impl", "__call__"});
}
bool under_torch_load(const Site& site) {
    return any_frame(site, {"torch.load", "torch_load", "serialization", "persistent_load",
                            "restore_location", "unpickl"});
}
// The program's own evaluation: libraries name their internals so too (PyTorch's autograd engine
// makes every gradient in torch::autograd::Engine::evaluate_function).
bool evaluation(const Site& site) {
    return any_frame(site, {"evaluat", "validat", "inference", "predict", "test_step", "eval_step"},
                     true);
}
// PyTorch's autograd engine made it, in backward(): a gradient.
bool made_by_autograd(const Site& site) {
    return any_frame(site, {"torch::autograd::engine"});
}
bool training(const Site& site) {
    return any_frame(site, {"train", "fit", "backward"});
}

bool in_event_loop(const std::string& file) {
    return file.find("/asyncio/") != std::string::npos ||
           file.find("/uvloop/") != std::string::npos;
}

// The loop is asyncio's, not the program's, and the site's code runs in its tasks (create_task,
// gather): the event loop's own loop, which runs each task's steps where no loop of the program
// holds it (model/site_table.cpp), or, where asyncio's source cannot be read, the function of a
// coroutine that the event loop steps itself, with no for/while of the program heading it. Tasks
// that run at once interleave, so each holds its memory past the next one's start.
bool loop_of_event_loop_tasks(const Site& site, const LoopSummary& loop) {
    if (in_event_loop(loop.file)) return true;
    if (loop.loop_line) return false;
    const auto head = std::find_if(site.frames.begin(), site.frames.end(), [&](const Frame& f) {
        return f.python && f.function == loop.function && f.file == loop.file;
    });
    if (head == site.frames.end()) return false;
    const auto caller =
        std::find_if(head + 1, site.frames.end(), [](const Frame& f) { return f.python; });
    return caller != site.frames.end() && in_event_loop(caller->file);
}

// "train.py:30": the loop's for/while line where the source shows it, else its head's line.
std::string loop_location(const LoopSummary& loop) {
    Frame head;
    head.file = loop.file;
    head.line = loop.loop_line ? loop.loop_line : loop.line;
    return frame_location(head);
}

std::string times(double ratio) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0fx", ratio);
    return buf;
}

bool uses_pytorch(const LoadedTrace& trace) {
    for (const auto& m : trace.modules)
        if (m.path.find("libc10_cuda") != std::string::npos) return true;
    return false;
}

std::string rank_of(const LoadedTrace& trace) {
    std::string rank = trace.process.env_value("LOCAL_RANK");
    return rank.empty() ? trace.process.env_value("RANK") : rank;
}

// A loop of the same thread whose iterations run inside `outer`'s, more of them.
bool runs_inner_loop(const Loops& loops, const Loop& outer) {
    for (const Loop& l : loops.loops)
        if (l.id != outer.id && l.thread == outer.thread && !l.starts.empty() &&
            l.starts.front() >= outer.starts.front() && l.starts.back() <= outer.end_ts &&
            l.iterations() > outer.iterations())
            return true;
    return false;
}

// A leak of a loop seen only through a caching allocator, all of whose growth and the rest of the
// run after it took less than settle_cache_warm_ups's floor (analysis/verdicts.h): a short run,
// in which the cache's warm-up reads as a leak. How long the run went on after it ("0.042 s");
// empty otherwise.
std::string too_soon_after_cache_growth(const Loops& loops, const Loop& loop) {
    if (!loop.seen_through_cache || loop.starts.empty() || loops.end_ts < loop.starts.back())
        return "";
    const uint64_t span = loop.starts.back() - loop.starts.front();
    const uint64_t after = loops.end_ts - loop.starts.back();
    if (span >= kCacheQuietFloorNs || after >= kCacheQuietFloorNs) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(after) / 1e9);
    return buf;
}

} // namespace

void add_hints(Report& report, const LoadedTrace& trace, const Loops& loops) {
    const SiteTable& table = *report.site_table;

    // Segments of PyTorch's caching allocator: the usual size, to spot one grown for a rare
    // request.
    std::vector<uint64_t> segment_sizes;
    for (const SiteStats& s : report.sites)
        if (s.allocations && table.site(s.site).caching_segment())
            segment_sizes.push_back(s.bytes_allocated / s.allocations);
    std::sort(segment_sizes.begin(), segment_sizes.end());
    uint64_t typical_segment =
        segment_sizes.empty() ? 0 : segment_sizes[(segment_sizes.size() - 1) / 2];

    uint64_t eval_bytes = 0, train_bytes = 0;
    for (SiteStats& s : report.sites) {
        if (!s.allocations) continue;
        const Site& site = table.site(s.site);
        if (s.verdict == Verdict::Leak && s.loop >= 0 && site.cached != CachedBlock::None) {
            std::string seconds = too_soon_after_cache_growth(loops, loops.loops[s.loop]);
            if (!seconds.empty())
                s.hints.push_back(
                    "PyTorch's cache warming up, if the run was short: it ended " + seconds +
                    " after the cache last grew here, too soon to tell a leak from the first "
                    "steps' tensors that the cache keeps for reuse; a run that goes on for a "
                    "second past its first steps tells them apart, and `gpuleak run --per-tensor` "
                    "shows the tensors themselves");
        }
        if (s.verdict == Verdict::Leak && forward_pass(site))
            s.hints.push_back(
                "allocated in a forward pass and kept across iterations: something holds each "
                "iteration's output or loss (losses.append(output) or loss_sum += loss keep the "
                "whole autograd graph alive); keep loss.item() or output.detach() instead");
        const bool kept = s.verdict == Verdict::Leak || s.verdict == Verdict::Accumulation;
        if (kept && made_by_autograd(site))
            s.hints.push_back(
                "made by PyTorch's autograd engine in backward(): gradients kept from step to step "
                "(a list of p.grad: zero_grad() sets .grad to None, so every backward() makes new "
                "ones; or parameters made anew each step, each with a gradient of its own); keep "
                "what you need of a gradient (.norm().item(), a .clone() of a slice), not the "
                "gradient");
        // Construction code is the program's: a library's thread builds no model.
        if (s.verdict == Verdict::Leak && s.loop >= 0 && !site.library_thread &&
            runs_inner_loop(loops, loops.loops[s.loop])) {
            size_t together = 0;
            for (const SiteStats& o : report.sites)
                together += o.verdict == Verdict::Leak && o.loop == s.loop &&
                            o.allocations == s.allocations;
            if (together >= 2)
                s.hints.push_back(
                    "the same construction code allocates again in every iteration of an outer "
                    "loop and nothing from it is freed: a model or optimizer rebuilt per outer "
                    "loop (e.g. per cross-validation fold) stays alive; del it, then "
                    "gc.collect() and torch.cuda.empty_cache() before building the next");
        }
        if (kept && s.loop >= 0 && static_cast<size_t>(s.loop) < report.loops.size() &&
            loop_of_event_loop_tasks(site, report.loops[s.loop]))
            s.hints.push_back(
                "allocated in asyncio tasks (create_task, gather), which the event loop runs, not "
                "a loop of your code: tasks in flight at once each hold their memory until they "
                "end, so N of them read as a rise over N iterations. If the rise stops at the "
                "number of tasks in flight, it is their concurrency, not a leak; "
                "gpuleak_mark_iteration(\"batch\") before each batch of tasks makes the batch "
                "the iteration");
        if (kept && site.cached == CachedBlock::PinnedHost)
            s.hints.push_back(
                "these are blocks of PyTorch's pinned-memory cache (DataLoader(pin_memory=True), "
                "Tensor.pin_memory()): it needed a new one in every iteration, so pinned batches "
                "stay alive past their step (a list of batches or of their CPU tensors, say); "
                "keep only what you need of each batch (loss.item(), a .clone() of a slice)");
        if (kept && site.caching_segment())
            s.hints.push_back(
                "these are segments of PyTorch's caching allocator: memory kept in this loop "
                "(any tensor of the iteration) never went back to the cache, so it grew; each "
                "segment was asked for by whichever tensor found the cache full, not necessarily "
                "the one kept: rerun with `gpuleak run --per-tensor` to see which tensor it is");
        if (s.verdict == Verdict::Retained && s.retained_because == RetainedBecause::BuiltInOneCall)
            s.hints.push_back(
                "not counted as a leak: allocated by a loop inside one call from this line (a "
                "library moving a model's parameters to the GPU, say) that frees nothing: bounded "
                "by that call");
        if (s.verdict == Verdict::Retained &&
            s.retained_because == RetainedBecause::HeldThroughLaterLoop && s.held_through >= 0 &&
            static_cast<size_t>(s.held_through) < report.loops.size()) {
            s.hints.push_back(
                "not counted as a leak: made by a loop that frees nothing while it runs (building "
                "a model's layers, say), then held unchanged through the later loop at " +
                loop_location(report.loops[s.held_through]) +
                "; if that first loop runs over data (batches, samples), it is a leak: keep only "
                "what you need of each item");
        }
        if (s.verdict == Verdict::Growth && site.cached == CachedBlock::PinnedHost)
            s.hints.push_back(
                "PyTorch's pinned-memory cache made a new block for each larger batch (it keeps "
                "blocks per power-of-two size and never splits them): what it holds grows with the "
                "largest batch; pad batches to a few fixed sizes");
        if (s.verdict == Verdict::Growth && site.caching_segment())
            s.hints.push_back(
                "PyTorch's caching allocator asked for ever larger segments here: each request "
                "was larger than the blocks freed before it (inputs growing: batch or sequence "
                "sizes), so what it reserves grows with the largest input; pad inputs to a few "
                "fixed sizes, or try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. If the "
                "tensors themselves are kept, it is a leak: `gpuleak run --per-tensor` tells");
        const bool warm_up = s.verdict == Verdict::Retained &&
                             s.retained_because == RetainedBecause::CacheWarmUp && s.loop >= 0 &&
                             static_cast<size_t>(s.loop) < report.loops.size();
        if (warm_up && site.cached == CachedBlock::PinnedHost)
            s.hints.push_back(
                "not counted as a leak: PyTorch's pinned-memory cache grew these blocks in the "
                "loop at " +
                loop_location(report.loops[s.loop]) +
                " for the batches in flight at once, early in the run, and later only for a new "
                "batch shape (an epoch's shorter last batch, say): the cache keeps them for "
                "reuse");
        if (warm_up && site.caching_segment()) {
            s.hints.push_back(
                "not counted as a leak: PyTorch's caching allocator grew these segments early in "
                "the loop at " +
                loop_location(report.loops[s.loop]) +
                " (the first steps' activations, an optimizer's state) and never again for the "
                "rest of the run: the cache keeps them for reuse. If that loop ran over data "
                "until then and another loop ran after it, they were a leak: `gpuleak run "
                "--per-tensor` shows which tensors they hold");
        }
        if (s.verdict == Verdict::Leak && s.loop >= 0 && loops.loops[s.loop].source == "threads") {
            const Loop& rounds = loops.loops[s.loop];
            uint64_t per_round = (s.allocations + rounds.iterations() - 1) / rounds.iterations();
            s.hints.push_back("each round of threads (e.g. workers started per epoch) leaves " +
                              std::to_string(per_round) +
                              " allocations from here behind when its threads end: free them "
                              "before the thread returns, or make them once and hand them to the "
                              "next round's threads");
        }
        std::string rank = rank_of(trace);
        if (under_torch_load(site) && s.devices_seen == 1 && !rank.empty() && rank != "0")
            s.hints.push_back(
                "loaded onto cuda:0 by torch.load in rank " + rank +
                ": every process places a copy on device 0; pass map_location='cpu' or the "
                "process's own device to torch.load");
        if (site.caching_segment() && s.live_bytes_end[0] && typical_segment &&
            s.largest >= 4 * typical_segment &&
            s.first_iteration > static_cast<int64_t>(loops.warmup) + 1)
            s.hints.push_back(
                "PyTorch's caching allocator grew a segment for a rare large request and keeps it "
                "after the tensors are freed; try "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
                "or torch.cuda.empty_cache() after such batches");
        // A segment's size is the cache's choice, not a request's (20 MiB for any of 1 to 10).
        uint64_t typical = report.summary.median_allocation_bytes;
        if (typical && !site.caching_segment() && s.largest >= 8 * typical && s.allocations <= 2 &&
            s.largest == s.bytes_allocated)
            s.hints.push_back("one request of " + human_bytes(s.largest) + " is " +
                              times(static_cast<double>(s.largest) / typical) +
                              " the typical allocation (" + human_bytes(typical) +
                              "): check the batch size or tensor shape used here");
        if (evaluation(site))
            eval_bytes += s.peak_live_bytes;
        else if (training(site))
            train_bytes += s.peak_live_bytes;
    }
    for (OomEvent& o : report.ooms) {
        uint64_t typical = report.summary.median_allocation_bytes;
        if (typical && o.requested >= 8 * typical)
            o.hints.push_back("the failed request is " +
                              times(static_cast<double>(o.requested) / typical) +
                              " the typical allocation (" + human_bytes(typical) +
                              "): a wrong batch size or shape at this line is likely");
        else if (o.total_bytes && o.requested < o.free_bytes)
            o.hints.push_back("the device had more free memory than requested: fragmentation; try "
                              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
    }
    if (train_bytes && eval_bytes * 10 >= train_bytes * 8)
        report.hints.push_back(
            "evaluation holds " + human_bytes(eval_bytes) + " against " + human_bytes(train_bytes) +
            " for training: evaluation without torch.no_grad() (or torch.inference_mode()) "
            "keeps every forward pass's graph");
    if (uses_pytorch(trace)) {
        switch (pytorch_allocator(trace.process)) {
        case TorchAllocator::MallocAsync:
            report.notes.push_back(
                "PyTorch allocated per tensor (backend:cudaMallocAsync): sites are tensors");
            break;
        case TorchAllocator::Uncached:
            report.notes.push_back("PyTorch ran without its cache "
                                   "(PYTORCH_NO_CUDA_MEMORY_CACHING=1): sites are tensors");
            break;
        case TorchAllocator::Caching:
            report.notes.push_back(
                "PyTorch's caching allocator was on: sites are allocator segments, not tensors; "
                "rerun with `gpuleak run --per-tensor` to see each tensor");
            break;
        }
    }
}

void add_multi_process_hints(std::vector<Report>& reports) {
    size_t loaders = 0;
    for (const Report& r : reports)
        for (const SiteStats& s : r.sites)
            if (s.devices_seen == 1 && under_torch_load(r.site_table->site(s.site))) {
                ++loaders;
                break;
            }
    if (loaders < 2) return;
    for (Report& r : reports)
        for (SiteStats& s : r.sites)
            if (s.devices_seen == 1 && under_torch_load(r.site_table->site(s.site)))
                s.hints.push_back(std::to_string(loaders) +
                                  " processes load onto cuda:0 through torch.load: each places a "
                                  "copy on device 0; "
                                  "pass map_location='cpu' or the process's own device");
}

} // namespace gpuleak::analyzer
