#include "analysis/aggregate/device_peak.h"

#include <algorithm>

namespace gpuleak::analyzer {

void DevicePeak::change(const Allocation& a, bool add) {
    if (live_class(a.kind) != 0) return;
    if (a.site >= sites_.size()) sites_.resize(a.site + 1);
    PerSite& s = sites_[a.site];
    if (s.epoch != epoch_) {
        s.epoch = epoch_;
        s.at_peak = s.live;
    }
    s.live = add ? s.live + a.size : s.live - a.size;
    live_ = add ? live_ + a.size : live_ - a.size;
    if (live_ > peak_) {
        peak_ = live_;
        peak_ts_ = a.ts;
        ++epoch_;
    }
}

void DevicePeak::finish(uint64_t, Report& report) {
    report.summary.peak_bytes = peak_;
    report.summary.peak_time_s = static_cast<double>(peak_ts_) / 1e9;
    for (uint32_t i = 0; i < sites_.size() && i < report.sites.size(); ++i) {
        PerSite& s = sites_[i];
        if (s.epoch != epoch_) s.at_peak = s.live;
        report.sites[i].at_global_peak = s.at_peak;
        if (s.at_peak) report.peak_by_site.push_back({i, s.at_peak});
    }
    std::stable_sort(report.peak_by_site.begin(), report.peak_by_site.end(),
                     [](auto& a, auto& b) { return a.bytes > b.bytes; });
}

} // namespace gpuleak::analyzer
