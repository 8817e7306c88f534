// Replays a trace's events in time order and builds the report: allocations paired with their
// frees, live memory per site, the device peak, what was live at each failed allocation, the
// largest requests.
//
// The peak breakdown is computed in the same single pass without snapshotting every site at every
// new maximum: each site remembers the epoch of the last global peak it has seen. When a site is
// about to change and a newer peak happened since it last changed, its current value (unchanged
// since that peak) is its value at the peak. At the end, a site that did not change since the last
// peak still holds its value at the peak.
#pragma once

#include "analysis/iterations.h"
#include "analysis/observer.h"
#include "analysis/report.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

// Also samples each site's live memory at the end of every iteration, counts the allocations that
// outlived the iteration that made them, and completes `iterations` whose boundaries are still to
// be collected (see iterations.h). `hooks`: an observer told of every event, a filter of events
// (observer.h).
Report replay(LoadedTrace& trace, SiteTable& sites, Iterations& iterations,
              const ReplayHooks& hooks = {});

} // namespace gpuleak::analyzer
