#include "analysis/sample_series.h"

namespace gpuleak::analyzer {
namespace {

uint8_t* put_varint(uint8_t* out, uint64_t v) {
    while (v >= 0x80) {
        *out++ = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    *out++ = static_cast<uint8_t>(v);
    return out;
}

uint64_t get_varint(const std::vector<uint8_t>& in, size_t offset) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = in[offset++];
        v |= uint64_t{b & 0x7fu} << shift;
        if (!(b & 0x80)) return v;
    }
}

uint64_t zigzag(uint64_t now, uint64_t before) {
    auto d = static_cast<int64_t>(now - before);
    return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}

} // namespace

void SampleSeries::push_back(const IterationSample& s) {
    if (size_ % kCheckpoint == 0) checkpoints_.push_back({last_, data_.size()});
    uint8_t encoded[25]; // the longest: 5 + 10 + 10 bytes
    uint8_t* end = put_varint(encoded, s.iteration - last_.iteration);
    end = put_varint(end, zigzag(s.bytes, last_.bytes));
    end = put_varint(end, zigzag(s.count, last_.count));
    data_.insert(data_.end(), encoded, end);
    last_ = s;
    ++size_;
}

size_t SampleSeries::memory_bytes() const {
    return data_.capacity() + checkpoints_.capacity() * sizeof(Checkpoint);
}

bool SampleSeries::operator==(const SampleSeries& other) const {
    return size_ == other.size_ && data_ == other.data_;
}

SampleSeries::Reader::Reader(const SampleSeries& series, uint32_t iteration) : series_(&series) {
    if (series.size_ == 0) return;
    // The last checkpoint whose sample comes before `iteration`, then sample by sample.
    size_t lo = 0, hi = series.checkpoints_.size();
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        // The checkpointed sample's iteration is read from its encoding.
        uint32_t it =
            series.checkpoints_[mid].before.iteration +
            static_cast<uint32_t>(get_varint(series.data_, series.checkpoints_[mid].offset));
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
