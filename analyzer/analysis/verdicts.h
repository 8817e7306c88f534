// A verdict per site from its live memory at the end of each iteration (after --warmup):
//   leak      the number of live allocations keeps rising: the last third of the iterations never
//             drops to what the first third reached, and a line fits the counts (R^2 = confidence);
//             bytes per iteration is that line's slope in bytes;
//   growth    the count stays bounded but the bytes rise the same way: sizes grow;
//   retained  something outlives its iteration but stays bounded (weights, a cache of N entries,
//             the last loop variable, a sawtooth released every k iterations);
//   transient everything is freed within the iteration that allocated it.
// With fewer than three iterations to compare there is no trend: sites that hold memory at the end
// are retained, the rest transient.
#pragma once

#include "analysis/iterations.h"
#include "analysis/report.h"

namespace gpuleak::analyzer {

void decide_verdicts(Report& report, const Iterations& iterations);

// Live bytes per iteration for a sparkline: at most `points` values (max of each bucket).
std::vector<uint64_t> live_bytes_by_iteration(const SiteStats& site, uint32_t iterations,
                                              size_t points);

} // namespace gpuleak::analyzer
