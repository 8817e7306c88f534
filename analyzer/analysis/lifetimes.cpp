#include "analysis/lifetimes.h"

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

void AllocationLog::on_alloc(const LiveChange& c) {
    if (c.kind != format::MemKind::Device) return;
    auto device = static_cast<int16_t>(c.device);
    live_[c.address] = {c.address, c.size, c.ts, c.site, device};
    push({c.ts, c.address, c.size, c.site, device, Action::Alloc});
}

void AllocationLog::on_free(const LiveChange& c) {
    if (c.kind != format::MemKind::Device) return;
    live_.erase(c.address);
    push({c.ts, c.address, c.size, c.site, static_cast<int16_t>(c.device), Action::Free});
}

void AllocationLog::on_failed(uint64_t ts, uint32_t site, int device, uint64_t requested,
                              uint64_t device_free) {
    push({ts, device_free, requested, site, static_cast<int16_t>(device), Action::Oom});
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
