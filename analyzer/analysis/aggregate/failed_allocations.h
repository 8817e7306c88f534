// Every failed allocation (an OOM, mostly) with what was live on the device, by site, at that
// moment: the first kOomsKept of them.
#pragma once

#include "analysis/aggregate/device_peak.h"
#include "analysis/replay.h"

namespace gpuleak::analyzer {

class FailedAllocations : public Aggregator {
public:
    // What was live is `peak`'s, which must be shown the same events (the same window).
    explicit FailedAllocations(const DevicePeak& peak) : peak_(peak) {}
    void on_failed(const FailedAllocation& f) override;
    void finish(uint64_t end_ts, Report& report) override;

private:
    static constexpr size_t kOomsKept = 100;
    static constexpr size_t kOomSitesKept = 20;
    const DevicePeak& peak_;
    std::vector<OomEvent> ooms_;
};

} // namespace gpuleak::analyzer
