#include "analysis/aggregate/largest.h"

#include <algorithm>

namespace gpuleak::analyzer {

void Largest::on_alloc(Allocation& a) {
    if (largest_.size() == kKept && a.size <= largest_.back().bytes) return;
    // After the ones of equal size already kept, as a stable sort would place it.
    auto at = std::upper_bound(
        largest_.begin(), largest_.end(), a.size,
        [](uint64_t bytes, const LargestAllocation& x) { return bytes > x.bytes; });
    largest_.insert(at, {a.size, a.site, format::api_name(a.api), format::kind_name(a.kind),
                         static_cast<double>(a.ts) / 1e9});
    if (largest_.size() > kKept) largest_.pop_back();
}

void Largest::finish(uint64_t, Report& report) {
    report.largest = std::move(largest_);
}

} // namespace gpuleak::analyzer
