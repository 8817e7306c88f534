#include "analysis/replay.h"

#include <algorithm>

#include "analysis/site_cache.h"
#include "trace/event_stream.h"

namespace gpuleak::analyzer {

using format::Tag;

std::vector<TimedAggregator*> timed(const std::vector<Aggregator*>& aggregators) {
    std::vector<TimedAggregator*> out;
    for (Aggregator* a : aggregators)
        if (auto* t = dynamic_cast<TimedAggregator*>(a)) out.push_back(t);
    return out;
}

void Pairing::wake(uint64_t ts) {
    wake_ts_ = ~uint64_t{0};
    for (TimedAggregator* a : timed_) {
        a->events_ = events_;
        if (ts >= a->wake_ts_) a->on_time(ts);
        wake_ts_ = std::min(wake_ts_, a->wake_ts_);
    }
}

void Pairing::born(Allocation& a) {
    for (Aggregator* g : aggregators_)
        g->on_alloc(a);
}

void Pairing::died(const Allocation& a, uint64_t ts, bool freed) {
    for (Aggregator* g : aggregators_)
        g->on_free(a, ts, freed);
}

void Pairing::alloc(Allocation a, uint64_t address, bool vmm_handle) {
    a.address = address;
    if (vmm_handle) {
        auto [it, fresh] = handles_.try_emplace(address, Handle{a});
        // A handle value we never saw released: the old one is gone.
        if (!fresh) died(it->second.allocation, a.ts, false);
        born(a);
        it->second = Handle{a};
        return;
    }
    auto& live = live_class(a.kind) == 2 ? host_ : device_;
    auto [entry, fresh] = live.try_emplace(address, a);
    // A free we never saw (from a path outside our hooks): the old block is gone.
    if (!fresh) died(*entry, a.ts, false);
    born(a);
    *entry = a;
}

void Pairing::free(const format::Record& r) {
    if (r.result != 0) {
        for (Aggregator* g : aggregators_)
            g->on_unpaired_free(r);
        return;
    }
    auto& live = r.space == format::Space::Host ? host_ : device_;
    Allocation* a = live.find(r.address);
    if (!a) {
        for (Aggregator* g : aggregators_)
            g->on_unpaired_free(r);
        return;
    }
    died(*a, r.ts);
    live.erase(a);
}

void Pairing::release_if_unused(std::unordered_map<uint64_t, Handle>::iterator it, uint64_t ts) {
    if (it->second.refs > 0 || it->second.mappings > 0) return;
    died(it->second.allocation, ts);
    handles_.erase(it);
}

void Pairing::vmm(const format::Record& r) {
    switch (r.tag) {
    case Tag::VmmRetain: {
        auto it = handles_.find(r.handle);
        if (it != handles_.end()) it->second.refs += 1;
        break;
    }
    case Tag::VmmRelease: {
        auto it = handles_.find(r.handle);
        if (it == handles_.end()) break;
        it->second.refs -= 1;
        release_if_unused(it, r.ts);
        break;
    }
    case Tag::VmmMap: {
        mappings_[r.address] = {r.size, r.handle};
        auto it = handles_.find(r.handle);
        if (it != handles_.end()) it->second.mappings += 1;
        break;
    }
    case Tag::VmmUnmap: {
        auto m = mappings_.lower_bound(r.address);
        while (m != mappings_.end() && m->first < r.address + r.size) {
            auto it = handles_.find(m->second.second);
            m = mappings_.erase(m);
            if (it == handles_.end()) continue;
            it->second.mappings -= 1;
            release_if_unused(it, r.ts);
        }
        break;
    }
    default:
        break;
    }
}

void Pairing::failed(const FailedAllocation& f) {
    for (Aggregator* g : aggregators_)
        g->on_failed(f);
}

void Pairing::finish(uint64_t end_ts, Report& report) {
    for (TimedAggregator* a : timed_)
        a->events_ = events_;
    for (Aggregator* g : aggregators_)
        g->finish(end_ts, report);
}

bool replay(LoadedTrace& trace, SiteTable& sites, const std::vector<Aggregator*>& aggregators,
            Report& report) {
    Pairing pairing(aggregators);
    SiteCache cache(trace, sites);
    uint64_t end_ts = 0;
    bool complete = for_each_event(trace, [&](const Event& e) {
        const format::Record& r = *e.record;
        end_ts = r.ts;
        pairing.time(r.ts);
        switch (r.tag) {
        case Tag::Alloc: {
            Allocation a;
            a.ts = r.ts;
            a.size = r.size;
            a.site = cache.site(e.thread, r.stack, r.py_stack);
            a.thread = e.lane;
            a.kind = r.kind;
            a.api = r.api;
            a.device = static_cast<int32_t>(r.device);
            pairing.alloc(a, r.address, r.api == format::Api::cuMemCreate);
            break;
        }
        case Tag::Free:
            pairing.free(r);
            break;
        case Tag::AllocFailed:
            pairing.failed({r.ts, cache.site(e.thread, r.stack, r.py_stack), e.lane, &r});
            break;
        case Tag::VmmRetain:
        case Tag::VmmRelease:
        case Tag::VmmMap:
        case Tag::VmmUnmap:
            pairing.vmm(r);
            break;
        default:
            break;
        }
    });
    pairing.finish(end_ts, report);
    return complete;
}

} // namespace gpuleak::analyzer
