#include "analysis/aggregate/totals.h"

#include <algorithm>

namespace gpuleak::analyzer {

SiteStats& Totals::site(uint32_t id) {
    if (id >= sites_.size()) {
        size_t from = sites_.size();
        sites_.resize(id + 1);
        for (size_t i = from; i < sites_.size(); ++i)
            sites_[i].site = static_cast<uint32_t>(i);
    }
    return sites_[id];
}

void Totals::on_alloc(Allocation& a) {
    SiteStats& st = site(a.site);
    int k = live_class(a.kind);
    if (a.device >= 0 && a.device < 64) st.devices_seen |= 1ull << a.device;
    st.allocations += 1;
    st.bytes_allocated += a.size;
    st.largest = std::max(st.largest, a.size);
    st.kinds_seen |= 1 << static_cast<int>(a.kind);
    st.apis_seen |= 1ull << static_cast<int>(a.api);
    st.live_count_end[k] += 1;
    st.live_bytes_end[k] += a.size;
    st.peak_live_bytes = std::max(st.peak_live_bytes, st.live_bytes_end[0] + st.live_bytes_end[1] +
                                                          st.live_bytes_end[2]);
    summary_.allocations += 1;
    if (size_sample_.size() < kSizeSampleKept) size_sample_.push_back(a.size);
}

void Totals::on_free(const Allocation& a, uint64_t, bool freed) {
    SiteStats& st = sites_[a.site];
    int k = live_class(a.kind);
    st.live_count_end[k] -= 1;
    st.live_bytes_end[k] -= a.size;
    if (!freed) return;
    st.frees += 1;
    summary_.frees += 1;
}

void Totals::on_failed(const FailedAllocation& f) {
    site(f.site);
    summary_.failed_allocations += 1;
}

void Totals::on_unpaired_free(const format::Record& r) {
    if (r.result != 0)
        summary_.failed_frees += 1;
    else
        summary_.unknown_frees += 1;
}

void Totals::finish(uint64_t end_ts, Report& report) {
    Summary& s = report.summary;
    s.events = events();
    s.allocations = summary_.allocations;
    s.frees = summary_.frees;
    s.failed_allocations = summary_.failed_allocations;
    s.unknown_frees = summary_.unknown_frees;
    s.failed_frees = summary_.failed_frees;
    s.duration_s = static_cast<double>(end_ts) / 1e9;
    if (!size_sample_.empty()) {
        std::nth_element(size_sample_.begin(), size_sample_.begin() + size_sample_.size() / 2,
                         size_sample_.end());
        s.median_allocation_bytes = size_sample_[size_sample_.size() / 2];
    }
    for (const SiteStats& st : sites_) {
        s.live_bytes_end += st.live_bytes_end[0];
        s.live_count_end += st.live_count_end[0];
        s.managed_live_bytes_end += st.live_bytes_end[1];
        s.managed_live_count_end += st.live_count_end[1];
        s.pinned_live_bytes_end += st.live_bytes_end[2];
        s.pinned_live_count_end += st.live_count_end[2];
        s.imported_live_bytes_end += st.live_bytes_end[3];
        s.imported_live_count_end += st.live_count_end[3];
    }
    report.sites = std::move(sites_);
}

} // namespace gpuleak::analyzer
