// Live device bytes over time, per device and per site, downsampled as the replay goes: memory and
// output stay bounded whatever the length of the trace. Time is cut into at most `max_buckets`
// buckets of equal width; when the trace outgrows them (or the points kept outgrow `max_points`),
// the width doubles and neighbouring buckets merge. Each series keeps, per bucket in which it
// changed, its value at the end of the bucket and its maximum within it; a bucket without a point
// holds the value of the last point before it. Device memory is the device class of report.h
// (device, array and graph memory). Each loop's iteration starts and the trace's markers are kept
// as marks (every k-th, k doubling, when there are more than `max_marks`), failed allocations up
// to `max_ooms`. For the HTML report and the Perfetto trace.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/replay.h"

namespace gpuleak::analyzer {

struct Loops;

class Timeline : public TimedAggregator {
public:
    struct Options {
        size_t max_buckets = 2048;
        size_t max_points = size_t{1} << 22; // over all series: about 100 MiB at most
        size_t max_marks = 4096;             // per loop, and markers
        size_t max_ooms = 1000;
        uint64_t initial_bucket_ns = 1000;
    };
    struct Point {
        uint32_t bucket;
        uint64_t last; // value at the end of the bucket
        uint64_t max;  // maximum within the bucket
    };
    struct Series {
        std::vector<Point> points;
        uint64_t current = 0;
        uint64_t peak = 0;
    };
    struct Mark {
        uint64_t ts;
        uint64_t value; // iteration number, or the marker's ordinal
        std::string name;
    };
    // Marks thinned evenly: `kept` are every `stride`-th of the `seen`.
    struct Marks {
        std::vector<Mark> kept;
        uint64_t stride = 1, seen = 0;
    };
    struct Oom {
        uint64_t ts;
        uint32_t site;
        int device;
        uint64_t requested;
    };

    Timeline() : Timeline(Options{}) {}
    explicit Timeline(Options options);

    void on_time(uint64_t ts) override { bucket_of(ts); }
    void on_alloc(Allocation& a) override { change(a, a.ts, true); }
    void on_free(const Allocation& a, uint64_t ts, bool) override { change(a, ts, false); }
    void on_failed(const FailedAllocation& f) override;
    void finish(uint64_t end_ts, Report&) override { bucket_of(end_ts); }

    // Iteration `iteration` (1-based) of loop `loop` starts at ts; in time order per loop.
    void add_iteration(uint32_t loop, uint64_t ts, uint32_t iteration);
    // The iteration starts of every loop (analysis/loops.h).
    void add_iterations(const Loops& loops);
    // A marker (gpuleak_mark_iteration, an NVTX range); in time order.
    void add_marker(uint64_t ts, const std::string& name);

    uint64_t bucket_ns() const { return width_; }
    uint32_t buckets() const; // buckets up to the end of the trace
    uint64_t end_ns() const { return end_; }
    const std::map<int, Series>& devices() const { return devices_; }
    const Series& total() const { return total_; } // all devices together
    // Every site that ever held device memory has a series (empty points otherwise).
    const Series* site(uint32_t id) const { return id < sites_.size() ? &sites_[id] : nullptr; }
    size_t site_count() const { return sites_.size(); }
    // Per loop index (analysis/loops.h): its iteration starts.
    const std::vector<Marks>& iterations() const { return iterations_; }
    const Marks& markers() const { return markers_; }
    const std::vector<Oom>& ooms() const { return ooms_; }
    uint64_t oom_count() const { return ooms_seen_; }
    size_t points() const { return total_points_; }

    // A series densified to one value per bucket: the bucket's end value (last) or its maximum.
    std::vector<uint64_t> dense(const Series& s, bool maximum) const;

private:
    void change(const Allocation& a, uint64_t ts, bool add);
    void set(Series& s, uint32_t bucket, uint64_t value);
    uint32_t bucket_of(uint64_t ts);
    void coarsen();
    void add_mark(Marks& marks, Mark mark) const;

    Options options_;
    uint64_t width_;
    uint64_t end_ = 0;
    size_t total_points_ = 0;
    std::map<int, Series> devices_;
    Series total_;
    std::vector<Series> sites_;
    std::vector<Marks> iterations_;
    Marks markers_;
    std::vector<Oom> ooms_;
    uint64_t ooms_seen_ = 0;
};

} // namespace gpuleak::analyzer
