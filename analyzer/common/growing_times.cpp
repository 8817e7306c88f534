#include "common/growing_times.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>
#include <utility>

namespace gpuleak::analyzer {

namespace {

constexpr size_t kChunkBytes = GrowingTimes::kChunk * sizeof(uint64_t);

} // namespace

GrowingTimes::GrowingTimes(GrowingTimes&& other) noexcept {
    *this = std::move(other);
}

GrowingTimes& GrowingTimes::operator=(GrowingTimes&& other) noexcept {
    if (this == &other) return *this;
    release();
    first_ = std::move(other.first_);
    chunks_ = std::move(other.chunks_);
    size_ = other.size_;
    other.first_.clear();
    other.chunks_.clear();
    other.size_ = 0;
    return *this;
}

GrowingTimes::~GrowingTimes() {
    release();
}

void GrowingTimes::release() {
    for (uint64_t* chunk : chunks_)
        munmap(chunk, kChunkBytes);
    chunks_.clear();
    first_.clear();
    size_ = 0;
}

void GrowingTimes::push_mapped(uint64_t t) {
    size_t at = (size_ - kFirst) % kChunk;
    if (at == 0) {
        void* chunk =
            mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (chunk == MAP_FAILED) throw std::bad_alloc();
        chunks_.push_back(static_cast<uint64_t*>(chunk));
    }
    chunks_.back()[at] = t;
}

std::vector<uint64_t> GrowingTimes::take() {
    std::vector<uint64_t> out;
    if (chunks_.empty()) {
        out = std::move(first_);
    } else {
        out.reserve(size_);
        out.insert(out.end(), first_.begin(), first_.end());
        std::vector<uint64_t>().swap(first_);
        size_t left = size_ - kFirst;
        for (uint64_t* chunk : chunks_) {
            size_t n = std::min(left, kChunk);
            out.insert(out.end(), chunk, chunk + n);
            munmap(chunk, kChunkBytes);
            left -= n;
        }
        chunks_.clear();
    }
    first_.clear();
    size_ = 0;
    return out;
}

} // namespace gpuleak::analyzer
