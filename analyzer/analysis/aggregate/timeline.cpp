#include "analysis/aggregate/timeline.h"

#include <algorithm>

#include "analysis/loops.h"

namespace gpuleak::analyzer {

Timeline::Timeline(Options options) : options_(options), width_(options.initial_bucket_ns) {
    options_.max_buckets = std::max<size_t>(options_.max_buckets, 16);
    if (!width_) width_ = 1;
}

uint32_t Timeline::buckets() const {
    return static_cast<uint32_t>(std::min<uint64_t>(end_ / width_ + 1, options_.max_buckets));
}

uint32_t Timeline::bucket_of(uint64_t ts) {
    end_ = std::max(end_, ts);
    while (ts / width_ >= options_.max_buckets)
        coarsen();
    return static_cast<uint32_t>(ts / width_);
}

void Timeline::coarsen() {
    width_ *= 2;
    total_points_ = 0;
    auto merge = [this](Series& s) {
        std::vector<Point>& p = s.points;
        size_t out = 0;
        for (size_t i = 0; i < p.size(); ++i) {
            Point q = p[i];
            q.bucket /= 2;
            if (out && p[out - 1].bucket == q.bucket) {
                p[out - 1].last = q.last;
                p[out - 1].max = std::max(p[out - 1].max, q.max);
            } else {
                p[out++] = q;
            }
        }
        p.resize(out);
        total_points_ += out;
    };
    for (auto& [device, s] : devices_)
        merge(s);
    merge(total_);
    for (Series& s : sites_)
        merge(s);
}

void Timeline::set(Series& s, uint32_t bucket, uint64_t value) {
    if (!s.points.empty() && s.points.back().bucket == bucket) {
        s.points.back().last = value;
        s.points.back().max = std::max(s.points.back().max, value);
    } else {
        // The value before the change held from the start of this bucket.
        s.points.push_back({bucket, value, std::max(value, s.current)});
        ++total_points_;
    }
    s.current = value;
    s.peak = std::max(s.peak, value);
}

void Timeline::change(const Allocation& a, uint64_t ts, bool add) {
    if (live_class(a.kind) != 0) return;
    uint32_t bucket = bucket_of(ts);
    auto apply = [&](Series& s) {
        uint64_t v = add ? s.current + a.size : s.current - std::min(s.current, a.size);
        set(s, bucket, v);
    };
    apply(devices_[a.device]);
    apply(total_);
    if (a.site >= sites_.size()) sites_.resize(a.site + 1);
    apply(sites_[a.site]);
    if (total_points_ > options_.max_points) coarsen();
}

void Timeline::add_mark(Marks& marks, Mark mark) const {
    if (marks.seen++ % marks.stride) return;
    marks.kept.push_back(std::move(mark));
    if (marks.kept.size() <= options_.max_marks) return;
    // Keep every other one: the marks kept are then every (2 * stride)-th.
    size_t out = 0;
    for (size_t i = 0; i < marks.kept.size(); i += 2)
        marks.kept[out++] = std::move(marks.kept[i]);
    marks.kept.resize(out);
    marks.stride *= 2;
}

void Timeline::on_failed(const FailedAllocation& f) {
    bucket_of(f.ts);
    if (ooms_seen_++ < options_.max_ooms)
        ooms_.push_back({f.ts, f.site, static_cast<int>(f.record->device), f.record->size});
}

void Timeline::add_marker(uint64_t ts, const std::string& name) {
    add_mark(markers_, {ts, markers_.seen + 1, name});
}

void Timeline::add_iteration(uint32_t loop, uint64_t ts, uint32_t iteration) {
    if (loop >= iterations_.size()) iterations_.resize(loop + 1);
    add_mark(iterations_[loop], {ts, iteration, {}});
}

void Timeline::add_iterations(const Loops& loops) {
    iterations_.resize(std::max(iterations_.size(), loops.loops.size()));
    for (const Loop& l : loops.loops)
        for (uint32_t k = 0; k < l.iterations(); ++k)
            add_iteration(l.id, l.starts[k], k + 1);
}

std::vector<uint64_t> Timeline::dense(const Series& s, bool maximum) const {
    std::vector<uint64_t> out(buckets(), 0);
    uint64_t carried = 0;
    size_t i = 0;
    for (uint32_t b = 0; b < out.size(); ++b) {
        if (i < s.points.size() && s.points[i].bucket == b) {
            out[b] = maximum ? s.points[i].max : s.points[i].last;
            carried = s.points[i].last;
            ++i;
        } else {
            out[b] = carried;
        }
    }
    return out;
}

} // namespace gpuleak::analyzer
