// Times appended one at a time to an array whose final length is unknown until the trace is read
// (a loop's iteration starts, a marker name's times: millions in a long job). A std::vector that
// doubles from 8 M to 16 M times holds both arrays while it copies (192 MB for a moment, where
// the times are 64). Here the first MiB grows as a vector; beyond it the times go into 1 MiB chunks
// mapped from the kernel, so growing never copies; take() hands them over as one vector, chunk by
// chunk, unmapping each once copied: the peak is the times' size and one chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuleak::analyzer {

class GrowingTimes {
public:
    GrowingTimes() = default;
    GrowingTimes(GrowingTimes&& other) noexcept;
    GrowingTimes& operator=(GrowingTimes&& other) noexcept;
    GrowingTimes(const GrowingTimes&) = delete;
    GrowingTimes& operator=(const GrowingTimes&) = delete;
    ~GrowingTimes();

    void push_back(uint64_t t) {
        if (size_ < kFirst)
            first_.push_back(t);
        else
            push_mapped(t);
        ++size_;
    }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    uint64_t operator[](size_t i) const {
        return i < kFirst ? first_[i] : chunks_[(i - kFirst) / kChunk][(i - kFirst) % kChunk];
    }
    uint64_t back() const { return (*this)[size_ - 1]; }
    uint64_t& front() { return first_.front(); } // not empty

    // Every time, in order, as one vector; leaves this empty.
    std::vector<uint64_t> take();

    static constexpr size_t kFirst = size_t{1} << 17; // times in the vector part (1 MiB)
    static constexpr size_t kChunk = size_t{1} << 17; // times per mapped chunk (1 MiB)

private:
    void push_mapped(uint64_t t);
    void release();

    std::vector<uint64_t> first_;
    std::vector<uint64_t*> chunks_;
    size_t size_ = 0;
};

} // namespace gpuleak::analyzer
