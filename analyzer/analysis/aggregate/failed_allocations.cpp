#include "analysis/aggregate/failed_allocations.h"

#include <algorithm>

namespace gpuleak::analyzer {

void FailedAllocations::change(const Allocation& a, bool add) {
    if (live_class(a.kind) != 0) return;
    if (a.site >= live_by_site_.size()) live_by_site_.resize(a.site + 1);
    live_by_site_[a.site] = add ? live_by_site_[a.site] + a.size : live_by_site_[a.site] - a.size;
    live_ = add ? live_ + a.size : live_ - a.size;
}

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
    oom.live_bytes = live_;
    oom.free_bytes = r.free_bytes ? r.free_bytes - 1 : 0;
    oom.total_bytes = r.total_bytes ? r.total_bytes - 1 : 0;
    for (uint32_t s = 0; s < live_by_site_.size(); ++s)
        if (live_by_site_[s]) oom.by_site.push_back({s, live_by_site_[s]});
    std::stable_sort(oom.by_site.begin(), oom.by_site.end(),
                     [](auto& a, auto& b) { return a.bytes > b.bytes; });
    if (oom.by_site.size() > kOomSitesKept) oom.by_site.resize(kOomSitesKept);
    ooms_.push_back(std::move(oom));
}

void FailedAllocations::finish(uint64_t, Report& report) {
    report.ooms = std::move(ooms_);
}

} // namespace gpuleak::analyzer
