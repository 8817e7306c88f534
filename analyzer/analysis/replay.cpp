#include "analysis/replay.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/address_map.h"
#include "analysis/site_cache.h"
#include "trace/event_stream.h"

namespace gpuleak::analyzer {
namespace {

using format::Api;
using format::MemKind;
using format::Tag;

constexpr size_t kLargestKept = 10;
constexpr size_t kOomsKept = 100;
constexpr size_t kOomSitesKept = 20;
constexpr size_t kSizeSampleKept = 1 << 20; // allocation sizes kept for the median

struct LiveAllocation {
    uint64_t size;
    uint32_t site;
    MemKind kind;
    int16_t device;
    uint32_t iteration;
};

struct VmmHandle {
    LiveAllocation allocation;
    int64_t refs = 1;
    int64_t mappings = 0;
};

class Replay {
public:
    Replay(LoadedTrace& trace, SiteTable& sites, Iterations& iterations, const ReplayHooks& hooks)
        : trace_(trace), sites_(sites), site_cache_(trace, sites), iterations_(iterations),
          boundaries_(iterations.boundaries), hooks_(hooks) {}

    Report run() {
        report_.trace_path = trace_.path;
        report_.site_table = &sites_;
        Summary& s = report_.summary;
        s.pid = trace_.process.pid;
        s.command = trace_.process.command();
        s.clean_end = trace_.clean_end;
        uint64_t allocations = 0; // counted by pass 1: the sample of sizes is allocated once
        for (const StackAllocations& a : trace_.alloc_stacks)
            allocations += a.count;
        size_sample_.reserve(std::min<uint64_t>(allocations, kSizeSampleKept));
        if (iterations_.boundaries_at_clock_site)
            replay_collecting_boundaries();
        else
            for_each_event(trace_, [this](const Event& e) { on_event(e); });
        finish();
        return std::move(report_);
    }

private:
    // The clock site's allocations are the boundaries, found as the replay meets them. A boundary
    // takes effect before every event at or after its time, so events tied in time with a clock
    // allocation are looked at together first: the result is what a list made in advance gives.
    void replay_collecting_boundaries() {
        EventStream stream(trace_);
        std::vector<std::pair<uint32_t, format::Record>> tied;
        while (const Event* e = stream.next()) {
            uint64_t ts = e->record->ts;
            if (stream.peek_ts() != ts) { // alone at its time: almost every event
                if (is_clock(e->thread, *e->record)) boundaries_.push_back(ts);
                on_event(*e);
                continue;
            }
            tied.clear();
            tied.emplace_back(e->thread, *e->record);
            while (stream.peek_ts() == ts && (e = stream.next()))
                tied.emplace_back(e->thread, *e->record);
            for (const auto& [thread, r] : tied)
                if (is_clock(thread, r)) boundaries_.push_back(ts);
            for (const auto& [thread, r] : tied)
                on_event({thread, &r});
        }
        iterations_.boundaries_at_clock_site = false;
    }

    bool is_clock(uint32_t thread, const format::Record& r) {
        return r.tag == Tag::Alloc &&
               site_cache_.site(thread, r.stack, r.py_stack) == iterations_.clock_site;
    }

    SiteStats& stats(uint32_t site) {
        if (site >= report_.sites.size()) {
            report_.sites.resize(site + 1);
            site_epoch_.resize(site + 1, 0);
            for (uint32_t i = 0; i < report_.sites.size(); ++i)
                report_.sites[i].site = i;
        }
        return report_.sites[site];
    }

    void change_live(uint64_t address, const LiveAllocation& a, bool add) {
        if (hooks_.observer) {
            LiveChange c{ts_, address, a.size, a.site, a.kind, a.device};
            add ? hooks_.observer->on_alloc(c) : hooks_.observer->on_free(c);
        }
        SiteStats& st = stats(a.site);
        int k = static_cast<int>(a.kind);
        if (a.kind == MemKind::Device && site_epoch_[a.site] != peak_epoch_) {
            // Lazy peak snapshot (see replay.h): unchanged since the last peak, so this is its
            // value then.
            site_epoch_[a.site] = peak_epoch_;
            st.at_global_peak = st.live_bytes_end[0];
        }
        st.live_count_end[k] = add ? st.live_count_end[k] + 1 : st.live_count_end[k] - 1;
        st.live_bytes_end[k] = add ? st.live_bytes_end[k] + a.size : st.live_bytes_end[k] - a.size;
        if (!st.changed) {
            st.changed = true;
            changed_sites_.push_back(a.site);
        }
        st.peak_live_bytes = std::max(
            st.peak_live_bytes, st.live_bytes_end[0] + st.live_bytes_end[1] + st.live_bytes_end[2]);
        if (a.kind != MemKind::Device) return;
        device_live_ = add ? device_live_ + a.size : device_live_ - a.size;
        if (device_live_ > report_.summary.peak_bytes) {
            report_.summary.peak_bytes = device_live_;
            report_.summary.peak_time_s = now_s_;
            ++peak_epoch_;
        }
    }

    void add(uint64_t address, bool host, const LiveAllocation& a) {
        auto& live = host ? host_live_ : device_live_map_;
        auto [entry, fresh] = live.try_emplace(address, a);
        if (!fresh) {
            // A free we never saw (e.g. from a path outside our hooks): the old block is gone.
            change_live(address, *entry, false);
            *entry = a;
        }
        change_live(address, a, true);
    }

    void release(uint64_t address, const LiveAllocation& a) {
        if (iteration_ > a.iteration) report_.sites[a.site].outlived += 1;
        change_live(address, a, false);
        report_.sites[a.site].frees += 1;
        report_.summary.frees += 1;
    }

    void maybe_release_handle(std::unordered_map<uint64_t, VmmHandle>::iterator it) {
        if (it->second.refs > 0 || it->second.mappings > 0) return;
        release(it->first, it->second.allocation);
        handles_.erase(it);
    }

    void on_alloc(const Event& e) {
        const format::Record& r = *e.record;
        uint32_t site = site_cache_.site(e.thread, r.stack, r.py_stack);
        LiveAllocation a{r.size, site, r.kind, static_cast<int16_t>(r.device), iteration_};
        SiteStats& st = stats(site);
        if (st.first_iteration < 0) st.first_iteration = iteration_;
        if (r.device >= 0 && r.device < 64) st.devices_seen |= 1ull << r.device;
        st.allocations += 1;
        st.bytes_allocated += r.size;
        st.largest = std::max(st.largest, r.size);
        st.kinds_seen |= 1 << static_cast<int>(r.kind);
        st.apis_seen |= 1ull << static_cast<int>(r.api);
        report_.summary.allocations += 1;
        if (size_sample_.size() < kSizeSampleKept) size_sample_.push_back(r.size);
        if (r.api == Api::cuMemCreate) {
            auto [it, fresh] = handles_.try_emplace(r.address, VmmHandle{a});
            if (!fresh) {
                change_live(r.address, it->second.allocation, false);
                it->second = VmmHandle{a};
            }
            change_live(r.address, a, true);
        } else {
            add(r.address, r.kind == MemKind::PinnedHost, a);
        }
        if (largest_.size() == kLargestKept && r.size <= largest_.back().bytes) return;
        // Largest first; after the ones of equal size already kept (as a stable sort would place
        // it).
        auto at = std::upper_bound(
            largest_.begin(), largest_.end(), r.size,
            [](uint64_t bytes, const LargestAllocation& x) { return bytes > x.bytes; });
        largest_.insert(at,
                        {r.size, site, format::api_name(r.api), format::kind_name(r.kind), now_s_});
        if (largest_.size() > kLargestKept) largest_.pop_back();
    }

    void on_free(const format::Record& r) {
        if (r.result != 0) {
            report_.summary.failed_frees += 1;
            return;
        }
        auto& live = r.space == format::Space::Host ? host_live_ : device_live_map_;
        LiveAllocation* a = live.find(r.address);
        if (!a) {
            report_.summary.unknown_frees += 1;
            return;
        }
        release(r.address, *a);
        live.erase(a);
    }

    void on_failed(const Event& e) {
        const format::Record& r = *e.record;
        report_.summary.failed_allocations += 1;
        if (report_.ooms.size() >= kOomsKept) return;
        OomEvent oom;
        oom.time_s = now_s_;
        oom.requested = r.size;
        oom.api = format::api_name(r.api);
        oom.device = static_cast<int>(r.device);
        oom.error = static_cast<int>(r.result);
        oom.site = site_cache_.site(e.thread, r.stack, r.py_stack);
        stats(oom.site);
        oom.live_bytes = device_live_;
        oom.free_bytes = r.free_bytes ? r.free_bytes - 1 : 0;
        oom.total_bytes = r.total_bytes ? r.total_bytes - 1 : 0;
        for (const SiteStats& st : report_.sites)
            if (st.live_bytes_end[0]) oom.by_site.push_back({st.site, st.live_bytes_end[0]});
        std::sort(oom.by_site.begin(), oom.by_site.end(),
                  [](auto& a, auto& b) { return a.bytes > b.bytes; });
        if (oom.by_site.size() > kOomSitesKept) oom.by_site.resize(kOomSitesKept);
        if (hooks_.observer)
            hooks_.observer->on_failed(ts_, oom.site, oom.device, oom.requested, oom.free_bytes);
        report_.ooms.push_back(std::move(oom));
    }

    // Live memory per site at the end of each iteration, for the sites that changed in it. A site
    // that ends the iteration where its last sample (or 0) left it gets no sample: readers carry
    // values forward, and a loop that allocates and frees in every iteration adds nothing.
    void sample_changed_sites() {
        for (uint32_t site : changed_sites_) {
            SiteStats& st = report_.sites[site];
            st.changed = false;
            uint64_t bytes = st.live_bytes_end[0] + st.live_bytes_end[1] + st.live_bytes_end[2];
            uint64_t count = st.live_count_end[0] + st.live_count_end[1] + st.live_count_end[2];
            uint64_t last_bytes = st.series.empty() ? 0 : st.series.back().bytes;
            uint64_t last_count = st.series.empty() ? 0 : st.series.back().count;
            if (bytes != last_bytes || count != last_count)
                st.series.push_back({iteration_, bytes, count});
        }
        changed_sites_.clear();
    }

    void on_event(const Event& e) {
        const format::Record& r = *e.record;
        while (next_boundary_ < boundaries_.size() && boundaries_[next_boundary_] <= r.ts) {
            sample_changed_sites();
            ++next_boundary_;
            iteration_ = static_cast<uint32_t>(next_boundary_);
            uint64_t start = boundaries_[next_boundary_ - 1];
            if (hooks_.observer &&
                (!hooks_.filter || hooks_.filter->keep_iteration(start, iteration_)))
                hooks_.observer->on_iteration(start, iteration_);
        }
        if (hooks_.filter && !hooks_.filter->keep(r, iteration_)) return;
        report_.summary.events += 1;
        now_s_ = static_cast<double>(r.ts) / 1e9;
        ts_ = r.ts;
        switch (r.tag) {
        case Tag::Alloc:
            on_alloc(e);
            break;
        case Tag::Free:
            on_free(r);
            break;
        case Tag::AllocFailed:
            on_failed(e);
            break;
        case Tag::VmmRetain: {
            auto it = handles_.find(r.handle);
            if (it != handles_.end()) it->second.refs += 1;
            break;
        }
        case Tag::VmmRelease: {
            auto it = handles_.find(r.handle);
            if (it == handles_.end()) break;
            it->second.refs -= 1;
            maybe_release_handle(it);
            break;
        }
        case Tag::VmmMap: {
            mappings_[r.address] = {r.size, r.handle};
            auto it = handles_.find(r.handle);
            if (it != handles_.end()) it->second.mappings += 1;
            break;
        }
        case Tag::Marker:
            if (hooks_.observer) hooks_.observer->on_marker(r.ts, r.text);
            break;
        case Tag::VmmUnmap: {
            auto m = mappings_.lower_bound(r.address);
            while (m != mappings_.end() && m->first < r.address + r.size) {
                auto it = handles_.find(m->second.second);
                m = mappings_.erase(m);
                if (it == handles_.end()) continue;
                it->second.mappings -= 1;
                maybe_release_handle(it);
            }
            break;
        }
        default:
            break;
        }
    }

    void finish() {
        sample_changed_sites();
        if (hooks_.observer) hooks_.observer->on_end(ts_);
        // Never freed: the end of the trace ended their iteration too.
        for (auto* live : {&device_live_map_, &host_live_})
            live->for_each(
                [this](uint64_t, const LiveAllocation& a) { report_.sites[a.site].outlived += 1; });
        for (const auto& [handle, h] : handles_)
            report_.sites[h.allocation.site].outlived += 1;
        Summary& s = report_.summary;
        s.duration_s = now_s_;
        if (!size_sample_.empty()) {
            std::nth_element(size_sample_.begin(), size_sample_.begin() + size_sample_.size() / 2,
                             size_sample_.end());
            s.median_allocation_bytes = size_sample_[size_sample_.size() / 2];
        }
        for (uint32_t i = 0; i < report_.sites.size(); ++i) {
            SiteStats& st = report_.sites[i];
            if (site_epoch_[i] != peak_epoch_) st.at_global_peak = st.live_bytes_end[0];
            s.live_bytes_end += st.live_bytes_end[0];
            s.live_count_end += st.live_count_end[0];
            s.managed_live_bytes_end += st.live_bytes_end[1];
            s.managed_live_count_end += st.live_count_end[1];
            s.pinned_live_bytes_end += st.live_bytes_end[2];
            s.pinned_live_count_end += st.live_count_end[2];
            if (st.at_global_peak) report_.peak_by_site.push_back({st.site, st.at_global_peak});
        }
        std::sort(report_.peak_by_site.begin(), report_.peak_by_site.end(),
                  [](auto& a, auto& b) { return a.bytes > b.bytes; });
        report_.largest = std::move(largest_);
        report_.warnings = trace_.warnings;
        if (!trace_.clean_end)
            report_.warnings.push_back(
                "the trace has no end record: the process was killed or crashed; "
                "events of its last ~100 ms may be missing");
    }

    LoadedTrace& trace_;
    SiteTable& sites_;
    SiteCache site_cache_;
    Iterations& iterations_;
    std::vector<uint64_t>& boundaries_;
    size_t next_boundary_ = 0;
    uint32_t iteration_ = 0;
    std::vector<uint32_t> changed_sites_;
    std::vector<uint64_t> size_sample_;
    Report report_;
    double now_s_ = 0;
    uint64_t ts_ = 0; // of the event being replayed
    const ReplayHooks& hooks_;
    uint64_t device_live_ = 0;
    uint64_t peak_epoch_ = 0;
    std::vector<uint64_t> site_epoch_;
    AddressMap<LiveAllocation> device_live_map_, host_live_;
    std::unordered_map<uint64_t, VmmHandle> handles_;
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> mappings_; // address -> (size, handle)
    std::vector<LargestAllocation> largest_;
};

} // namespace

Report replay(LoadedTrace& trace, SiteTable& sites, Iterations& iterations,
              const ReplayHooks& hooks) {
    Report report = Replay(trace, sites, iterations, hooks).run();
    report.iterations = {
        iterations.source, iterations.count(), iterations.markers, iterations.warmup,
        iterations.has_clock_site ? static_cast<int64_t>(iterations.clock_site) : -1};
    return report;
}

} // namespace gpuleak::analyzer
