// Replays a trace's events in time order and pairs each allocation with its free: by address space
// (device address, host pointer) and, for VMM, by handle with its reference and mapping counts
// (memory is released when the last reference and the last mapping are gone). What the program
// held and when is handed to aggregators (analysis/aggregate/), each computing one part of the
// report; adding a report never touches the pairing.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "analysis/address_map.h"
#include "analysis/report.h"
#include "gpuleak/format/records.h"
#include "model/site_table.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {

struct Allocation {
    uint64_t ts = 0;
    uint64_t size = 0;
    uint32_t site = 0;
    uint32_t thread = 0; // the thread (Event::lane), not its recording slot
    format::MemKind kind = format::MemKind::Device;
    format::Api api = format::Api::Unknown;
    int32_t device = -1;
    uint64_t address = 0; // device address or host pointer; for cuMemCreate the VMM handle
    // Set by the aggregator of loop lifetimes: its (site, loop) slot and birth iteration.
    uint32_t slot = ~0u;
    uint32_t iteration = 0;
    // Set by a window (analysis/window.h): outside it, so no aggregator behind it saw it born.
    bool left_out = false;
};

struct FailedAllocation {
    uint64_t ts = 0;
    uint32_t site = 0;
    uint32_t thread = 0;
    const format::Record* record = nullptr; // valid during the call
};

class Aggregator {
public:
    virtual ~Aggregator() = default;
    virtual void on_alloc(Allocation& /*a*/) {}
    // `freed`: false when the block vanished without a free we saw (its address came back from
    // a new allocation).
    virtual void on_free(const Allocation& /*a*/, uint64_t /*ts*/, bool /*freed*/) {}
    virtual void on_failed(const FailedAllocation& /*f*/) {}
    virtual void on_unpaired_free(const format::Record& /*r*/) {} // unknown or failed frees
    // After the last event (at `end_ts`): the aggregator's part of the report. Called in the
    // order the aggregators were given; the first sizes report.sites.
    virtual void finish(uint64_t /*end_ts*/, Report& /*report*/) {}
};

// An aggregator that is also told events' times, before the events. Only the few that need it
// are, and only when they ask: a virtual call per aggregator per event was 3 % of the analyzer's
// instructions. on_time comes once an event's time reaches wake_ts() (0, the default: every
// event's), which only the constructor and on_time may change. events() counts every event it
// was shown, whether on_time came or not; Pairing brings it up to date whenever one of its timed
// aggregators is told a time, and before finish.
class TimedAggregator : public Aggregator {
public:
    virtual void on_time(uint64_t ts) = 0;
    uint64_t wake_ts() const { return wake_ts_; }
    uint64_t events() const { return events_; }
    // What a Window does before each event, for the aggregators behind it.
    void show(uint64_t ts) {
        events_ += 1;
        if (ts >= wake_ts_) on_time(ts);
    }

protected:
    uint64_t wake_ts_ = 0;

private:
    friend class Pairing; // shows every event to all of its timed aggregators, and counts once
    uint64_t events_ = 0;
};

// Those of `aggregators` that are timed.
std::vector<TimedAggregator*> timed(const std::vector<Aggregator*>& aggregators);

// Returns false if a block could not be read (the warning is in the trace).
bool replay(LoadedTrace& trace, SiteTable& sites, const std::vector<Aggregator*>& aggregators,
            Report& report);

// The pairing itself, without a trace: tests feed it records in time order.
class Pairing {
public:
    explicit Pairing(const std::vector<Aggregator*>& aggregators)
        : aggregators_(aggregators), timed_(timed(aggregators)) {}
    // Before each event. Inline: a count and a compare, where the timed aggregators each
    // counted and compared for every event (2 % of the analyzer's instructions).
    void time(uint64_t ts) {
        events_ += 1;
        if (ts >= wake_ts_) [[unlikely]]
            wake(ts);
    }
    // An Alloc record's allocation; VMM handles (cuMemCreate) are keyed by `address` too.
    void alloc(Allocation a, uint64_t address, bool vmm_handle);
    void free(const format::Record& r); // Free: space, address, result
    void vmm(const format::Record& r);  // VmmRetain, VmmRelease, VmmMap, VmmUnmap
    void failed(const FailedAllocation& f);
    void finish(uint64_t end_ts, Report& report);

private:
    struct Handle {
        Allocation allocation;
        int64_t refs = 1;
        int64_t mappings = 0;
    };
    void wake(uint64_t ts); // the timed aggregators whose wake_ts() ts reaches
    void born(Allocation& a);
    void died(const Allocation& a, uint64_t ts, bool freed = true);
    void release_if_unused(std::unordered_map<uint64_t, Handle>::iterator it, uint64_t ts);

    std::vector<Aggregator*> aggregators_;
    std::vector<TimedAggregator*> timed_;
    uint64_t events_ = 0;  // shown so far
    uint64_t wake_ts_ = 0; // the earliest of the timed aggregators' wake_ts()
    AddressMap<Allocation> device_, host_;
    std::unordered_map<uint64_t, Handle> handles_;
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> mappings_; // address -> (size, handle)
};

} // namespace gpuleak::analyzer
