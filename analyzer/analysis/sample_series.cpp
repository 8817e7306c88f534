#include "analysis/sample_series.h"

namespace gpuleak::analyzer {

void SampleSeries::push_back(const IterationSample& s) {
    if (size_ % kCheckpoint == 0) checkpoints_.push_back({last_, data_.size()});
    uint8_t encoded[3 * format::kMaxVarintBytes];
    format::Encoder e(encoded, encoded + sizeof encoded);
    e.varint(s.iteration - last_.iteration);
    e.svarint(static_cast<int64_t>(s.bytes - last_.bytes));
    e.svarint(static_cast<int64_t>(s.count - last_.count));
    data_.insert(data_.end(), encoded, e.position());
    last_ = s;
    ++size_;
}

size_t SampleSeries::memory_bytes() const {
    return data_.capacity() + checkpoints_.capacity() * sizeof(Checkpoint);
}

SampleSeries::Reader::Reader(const SampleSeries& series, uint32_t iteration) : series_(&series) {
    if (series.size_ == 0) return;
    // The last checkpoint whose sample comes before `iteration`, then sample by sample.
    size_t lo = 0, hi = series.checkpoints_.size();
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        // The checkpointed sample's iteration is read from its encoding.
        size_t offset = series.checkpoints_[mid].offset;
        uint32_t it = series.checkpoints_[mid].before.iteration +
                      static_cast<uint32_t>(read_varint(series.data_, offset));
        if (it < iteration)
            lo = mid;
        else
            hi = mid;
    }
    index_ = lo * kCheckpoint;
    offset_ = series.checkpoints_[lo].offset;
    value_ = series.checkpoints_[lo].before;
    decode();
    while (!done() && next_.iteration < iteration)
        advance();
}

} // namespace gpuleak::analyzer
