#include "analysis/aggregate/allocation_log.h"

#include <algorithm>

namespace gpuleak::analyzer {

void AllocationLog::push(const Record& r) {
    if (!max_records_) {
        ++dropped_;
        return;
    }
    if (records_.size() == max_records_) {
        records_.pop_front();
        ++dropped_;
    }
    records_.push_back(r);
}

void AllocationLog::on_alloc(Allocation& a) {
    if (live_class(a.kind) != 0) return;
    auto device = static_cast<int16_t>(a.device);
    live_[a.address] = {a.address, a.size, a.ts, a.site, device};
    push({a.ts, a.address, a.size, a.site, device, Action::Alloc});
}

void AllocationLog::on_free(const Allocation& a, uint64_t ts, bool) {
    if (live_class(a.kind) != 0) return;
    live_.erase(a.address);
    push({ts, a.address, a.size, a.site, static_cast<int16_t>(a.device), Action::Free});
}

void AllocationLog::on_failed(const FailedAllocation& f) {
    const format::Record& r = *f.record;
    uint64_t device_free = r.free_bytes ? r.free_bytes - 1 : 0; // stored plus one; 0: unknown
    push({f.ts, device_free, r.size, f.site, static_cast<int16_t>(r.device), Action::Oom});
}

std::vector<AllocationLog::Live> AllocationLog::live() const {
    std::vector<Live> out;
    out.reserve(live_.size());
    for (const auto& [address, l] : live_)
        out.push_back(l);
    std::sort(out.begin(), out.end(), [](const Live& a, const Live& b) {
        return a.device != b.device ? a.device < b.device : a.address < b.address;
    });
    return out;
}

} // namespace gpuleak::analyzer
