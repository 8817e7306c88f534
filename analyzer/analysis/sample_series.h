// A (site, loop) pair's live memory at the end of the iterations in which it changed, as the
// verdicts read it. A pair that changes every iteration (a leak, a buffer sized by each input)
// takes a sample per iteration: 24 bytes each as structs, 240 MB for one such pair over 10 M
// iterations. Here each sample is stored as its differences from the one before (iteration,
// bytes, count; LEB128, signed ones zigzagged), about 5 bytes in a loop, with a checkpoint of the
// full values every kCheckpoint samples so that reading can start at any iteration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuleak/format/encoder.h"
#include "gpuleak/format/reader.h"

namespace gpuleak::analyzer {

struct IterationSample {
    uint32_t iteration;
    uint64_t bytes; // live at the end of the iteration (all memory kinds)
    uint64_t count;
    bool operator==(const IterationSample&) const = default;
};

class SampleSeries {
public:
    // Iterations ascend.
    void push_back(const IterationSample& s);
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const IterationSample& back() const { return last_; } // not empty
    // What the samples take, encoded and with their checkpoints.
    size_t memory_bytes() const;

    // Reads samples in order, from the first whose iteration is at least `iteration`; value()
    // holds the latest sample before that (zeros when none).
    class Reader {
    public:
        Reader(const SampleSeries& series, uint32_t iteration);
        bool done() const { return index_ == series_->size_; }
        const IterationSample& next() const { return next_; } // not done()
        const IterationSample& value() const { return value_; }
        void advance() { // value() becomes next(); not done()
            value_ = next_;
            ++index_;
            decode();
        }

    private:
        // Inline: the verdicts read a long series several times.
        void decode() {
            if (done()) return;
            next_.iteration = value_.iteration + static_cast<uint32_t>(varint());
            next_.bytes = value_.bytes + static_cast<uint64_t>(format::unzigzag(varint()));
            next_.count = value_.count + static_cast<uint64_t>(format::unzigzag(varint()));
        }
        uint64_t varint() { return read_varint(series_->data_, offset_); }
        const SampleSeries* series_;
        size_t index_ = 0, offset_ = 0;
        IterationSample value_{0, 0, 0}, next_{0, 0, 0};
    };

    // f(sample) for every sample, in order.
    template <class F> void each(F&& f) const {
        for (Reader r(*this, 0); !r.done(); r.advance())
            f(r.next());
    }

    static constexpr size_t kCheckpoint = 64;

private:
    static uint64_t read_varint(const std::vector<uint8_t>& data, size_t& offset) {
        const uint8_t* p = data.data() + offset;
        uint64_t v;
        format::RecordCursor::unchecked_varint<false>(p, v); // written by push_back
        offset = static_cast<size_t>(p - data.data());
        return v;
    }
    struct Checkpoint {
        IterationSample before; // the sample before the checkpointed one (zeros for the first)
        size_t offset;          // of the checkpointed sample's encoding
    };
    std::vector<uint8_t> data_;
    std::vector<Checkpoint> checkpoints_; // sample i * kCheckpoint
    IterationSample last_{0, 0, 0};
    size_t size_ = 0;
};

} // namespace gpuleak::analyzer
