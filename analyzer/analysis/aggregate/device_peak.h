// The process's device-memory peak and what each site held at that moment.
//
// Without snapshotting every site at every new maximum: each site remembers the epoch (count of
// new maxima) when it last changed. When a site is about to change and a newer peak happened since,
// its current value, unchanged since that peak, is its value at the peak. At the end, a site that
// did not change since the last peak still holds its value at the peak.
#pragma once

#include "analysis/replay.h"

namespace gpuleak::analyzer {

class DevicePeak : public Aggregator {
public:
    void on_alloc(Allocation& a) override { change(a, true); }
    void on_free(const Allocation& a, uint64_t, bool) override { change(a, false); }
    void finish(uint64_t end_ts, Report& report) override;

    // Device bytes live now (FailedAllocations reads them at each failure): in all, and by site
    // for the sites [0, sites()).
    uint64_t live_bytes() const { return live_; }
    uint32_t sites() const { return static_cast<uint32_t>(sites_.size()); }
    uint64_t live_bytes(uint32_t site) const { return sites_[site].live; }

private:
    void change(const Allocation& a, bool add);

    struct PerSite {
        uint64_t live = 0, at_peak = 0, epoch = 0;
    };
    std::vector<PerSite> sites_;
    uint64_t live_ = 0, peak_ = 0, peak_ts_ = 0, epoch_ = 0;
};

} // namespace gpuleak::analyzer
