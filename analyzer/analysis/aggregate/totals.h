// Per site and for the process: allocations, bytes, frees, what is live at the end by memory kind,
// each site's own most live bytes, and the median request size. Sizes report.sites: runs first.
#pragma once

#include "analysis/replay.h"

namespace gpuleak::analyzer {

// Timed for its count of events alone: it never asks for a time.
class Totals : public TimedAggregator {
public:
    Totals() { wake_ts_ = ~uint64_t{0}; }
    void on_time(uint64_t) override {}
    void on_alloc(Allocation& a) override;
    void on_free(const Allocation& a, uint64_t ts, bool freed) override;
    void on_failed(const FailedAllocation& f) override;
    void on_unpaired_free(const format::Record& r) override;
    void finish(uint64_t end_ts, Report& report) override;

private:
    SiteStats& site(uint32_t id);

    static constexpr size_t kSizeSampleKept = 1 << 20; // allocation sizes kept for the median
    std::vector<SiteStats> sites_;
    Summary summary_;
    std::vector<uint64_t> size_sample_;
};

} // namespace gpuleak::analyzer
