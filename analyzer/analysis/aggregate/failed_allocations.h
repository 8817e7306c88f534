// Every failed allocation (an OOM, mostly) with what was live on the device, by site, at that
// moment: the first kOomsKept of them.
#pragma once

#include "analysis/replay.h"

namespace gpuleak::analyzer {

class FailedAllocations : public Aggregator {
public:
    void on_alloc(Allocation& a) override { change(a, true); }
    void on_free(const Allocation& a, uint64_t, bool) override { change(a, false); }
    void on_failed(const FailedAllocation& f) override;
    void finish(uint64_t end_ts, Report& report) override;

private:
    void change(const Allocation& a, bool add);

    static constexpr size_t kOomsKept = 100;
    static constexpr size_t kOomSitesKept = 20;
    std::vector<uint64_t> live_by_site_; // device bytes
    uint64_t live_ = 0;
    std::vector<OomEvent> ooms_;
};

} // namespace gpuleak::analyzer
