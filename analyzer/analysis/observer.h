// Per-event hooks into the replay, for aggregators that need more than the report's totals: the
// timeline of live memory (timeline.h) and allocation lifetimes for the PyTorch snapshot
// (lifetimes.h). An observer is called in time order; every change of live memory is exactly one
// on_alloc or on_free (a block replaced at a reused address without a recorded free is an on_free
// then an on_alloc). A filter (window.h) decides which events the replay looks at at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuleak/format/reader.h"

namespace gpuleak::analyzer {

struct LiveChange {
    uint64_t ts = 0;      // ns since the trace started
    uint64_t address = 0; // device or host address; for cuMemCreate the VMM handle
    uint64_t size = 0;
    uint32_t site = 0;
    format::MemKind kind = format::MemKind::Device;
    int device = -1; // -1: not known
};

class ReplayObserver {
public:
    virtual ~ReplayObserver() = default;
    virtual void on_alloc(const LiveChange&) {}
    virtual void on_free(const LiveChange&) {}
    // A failed allocation (an OOM); device_free is 0 when the driver did not say.
    virtual void on_failed(uint64_t /*ts*/, uint32_t /*site*/, int /*device*/,
                           uint64_t /*requested*/, uint64_t /*device_free*/) {}
    virtual void on_marker(uint64_t /*ts*/, const std::string& /*name*/) {}
    // Iteration `iteration` (1-based) starts at ts.
    virtual void on_iteration(uint64_t /*ts*/, uint32_t /*iteration*/) {}
    virtual void on_end(uint64_t /*ts*/) {}
};

// Several observers behind one pointer.
class ObserverList : public ReplayObserver {
public:
    void add(ReplayObserver* o) {
        if (o) list_.push_back(o);
    }
    bool empty() const { return list_.empty(); }
    void on_alloc(const LiveChange& c) override {
        for (auto* o : list_)
            o->on_alloc(c);
    }
    void on_free(const LiveChange& c) override {
        for (auto* o : list_)
            o->on_free(c);
    }
    void on_failed(uint64_t ts, uint32_t site, int device, uint64_t requested,
                   uint64_t device_free) override {
        for (auto* o : list_)
            o->on_failed(ts, site, device, requested, device_free);
    }
    void on_marker(uint64_t ts, const std::string& name) override {
        for (auto* o : list_)
            o->on_marker(ts, name);
    }
    void on_iteration(uint64_t ts, uint32_t iteration) override {
        for (auto* o : list_)
            o->on_iteration(ts, iteration);
    }
    void on_end(uint64_t ts) override {
        for (auto* o : list_)
            o->on_end(ts);
    }

private:
    std::vector<ReplayObserver*> list_;
};

// Which timed records the replay looks at. Called once per record, in time order, with the
// iteration the record falls in (0 = before the first boundary).
class EventFilter {
public:
    virtual ~EventFilter() = default;
    virtual bool keep(const format::Record& record, uint32_t iteration) = 0;
    // Whether the start of `iteration` at ts is inside what is kept (for the observer's marks).
    virtual bool keep_iteration(uint64_t /*ts*/, uint32_t /*iteration*/) { return true; }
};

struct ReplayHooks {
    ReplayObserver* observer = nullptr;
    EventFilter* filter = nullptr;
};

} // namespace gpuleak::analyzer
