#include "analysis/aggregate/failed_allocations.h"

#include <algorithm>

namespace gpuleak::analyzer {

void FailedAllocations::on_failed(const FailedAllocation& f) {
    if (ooms_.size() >= kOomsKept) return;
    const format::Record& r = *f.record;
    OomEvent oom;
    oom.time_s = static_cast<double>(f.ts) / 1e9;
    oom.requested = r.size;
    oom.api = format::api_name(r.api);
    oom.device = static_cast<int>(r.device);
    oom.error = static_cast<int>(r.result);
    oom.site = f.site;
    oom.live_bytes = peak_.live_bytes();
    oom.free_bytes = r.free_bytes ? r.free_bytes - 1 : 0;
    oom.total_bytes = r.total_bytes ? r.total_bytes - 1 : 0;
    for (uint32_t s = 0; s < peak_.sites(); ++s)
        if (uint64_t live = peak_.live_bytes(s)) oom.by_site.push_back({s, live});
    std::stable_sort(oom.by_site.begin(), oom.by_site.end(),
                     [](auto& a, auto& b) { return a.bytes > b.bytes; });
    if (oom.by_site.size() > kOomSitesKept) oom.by_site.resize(kOomSitesKept);
    ooms_.push_back(std::move(oom));
}

void FailedAllocations::finish(uint64_t, Report& report) {
    report.ooms = std::move(ooms_);
}

} // namespace gpuleak::analyzer
