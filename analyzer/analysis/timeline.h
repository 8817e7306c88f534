// Live device bytes over time, per device and per site, downsampled as the replay goes: memory and
// output stay bounded whatever the length of the trace. Time is cut into at most `max_buckets`
// buckets of equal width; when the trace outgrows them (or the points kept outgrow `max_points`),
// the width doubles and neighbouring buckets merge. Each series keeps, per bucket in which it
// changed, its value at the end of the bucket and its maximum within it; a bucket without a point
// holds the value of the last point before it. Iteration boundaries and markers are kept as marks
// (every k-th, k doubling, when there are more than `max_marks`), failed allocations up to
// `max_ooms`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/observer.h"

namespace gpuleak::analyzer {

class Timeline : public ReplayObserver {
public:
    struct Options {
        size_t max_buckets = 2048;
        size_t max_points = size_t{1} << 22; // over all series: about 100 MiB at most
        size_t max_marks = 4096;
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
    struct Oom {
        uint64_t ts;
        uint32_t site;
        int device;
        uint64_t requested;
    };

    Timeline() : Timeline(Options{}) {}
    explicit Timeline(Options options);

    void on_alloc(const LiveChange& c) override { change(c, true); }
    void on_free(const LiveChange& c) override { change(c, false); }
    void on_failed(uint64_t ts, uint32_t site, int device, uint64_t requested,
                   uint64_t device_free) override;
    void on_marker(uint64_t ts, const std::string& name) override;
    void on_iteration(uint64_t ts, uint32_t iteration) override;
    void on_end(uint64_t ts) override;

    uint64_t bucket_ns() const { return width_; }
    uint32_t buckets() const; // buckets up to the end of the trace
    uint64_t end_ns() const { return end_; }
    const std::map<int, Series>& devices() const { return devices_; }
    const Series& total() const { return total_; } // all devices together
    // Every site that ever held device memory has a series (empty points otherwise).
    const Series* site(uint32_t id) const { return id < sites_.size() ? &sites_[id] : nullptr; }
    size_t site_count() const { return sites_.size(); }
    const std::vector<Mark>& iterations() const { return iterations_; }
    uint64_t iteration_stride() const { return iteration_stride_; }
    uint64_t iteration_count() const { return iteration_seen_; }
    const std::vector<Mark>& markers() const { return markers_; }
    uint64_t marker_count() const { return markers_seen_; }
    const std::vector<Oom>& ooms() const { return ooms_; }
    uint64_t oom_count() const { return ooms_seen_; }
    size_t points() const { return total_points_; }

    // A series densified to one value per bucket: the bucket's end value (last) or its maximum.
    std::vector<uint64_t> dense(const Series& s, bool maximum) const;

private:
    void change(const LiveChange& c, bool add);
    void set(Series& s, uint32_t bucket, uint64_t value);
    uint32_t bucket_of(uint64_t ts);
    void coarsen();
    static void add_mark(std::vector<Mark>& marks, uint64_t& stride, uint64_t& seen, size_t max,
                         Mark mark);

    Options options_;
    uint64_t width_;
    uint64_t end_ = 0;
    size_t total_points_ = 0;
    std::map<int, Series> devices_;
    Series total_;
    std::vector<Series> sites_;
    std::vector<Mark> iterations_, markers_;
    uint64_t iteration_stride_ = 1, iteration_seen_ = 0;
    uint64_t marker_stride_ = 1, markers_seen_ = 0;
    std::vector<Oom> ooms_;
    uint64_t ooms_seen_ = 0;
};

} // namespace gpuleak::analyzer
