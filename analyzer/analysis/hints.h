// Likely causes, each from evidence in the trace and worded as a likelihood, never a certainty:
//   - a forward-pass site whose memory accumulates across iterations: the output or loss is kept
//     (losses.append(output), loss_sum += loss keep the autograd graph);
//   - several sites leaking together once per iteration of an outer loop that runs an inner one:
//     a model rebuilt per outer loop (cross-validation fold) and not released;
//   - allocations under torch.load on device 0 in a process whose rank is not 0 (or in several
//     processes): a missing map_location;
//   - evaluation sites holding about as much as training sites: evaluation without no_grad;
//   - PyTorch's caching allocator keeping segments grown for a rare large request;
//   - one request far above the typical allocation: a wrong batch size or shape.
// Also notes PyTorch's allocator mode: with the caching allocator, sites are segments, not tensors.
#pragma once

#include <vector>

#include "analysis/loops.h"
#include "analysis/report.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

void add_hints(Report& report, const LoadedTrace& trace, const Loops& loops);
// Across processes of one job (torch.load on device 0 in several ranks).
void add_multi_process_hints(std::vector<Report>& reports);

} // namespace gpuleak::analyzer
