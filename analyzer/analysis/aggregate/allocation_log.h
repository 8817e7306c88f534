// Device allocations with their addresses and times, for exports that replay allocator history
// (the PyTorch memory snapshot): what is live at the end, and the last `max_records` allocations,
// frees and failed allocations in time order. Keeping a suffix of the history keeps it
// consistent with the live set: every free kept either has its allocation kept too or refers to
// memory allocated before the kept history began. Device memory is the device class of report.h
// (device, array and graph memory). Memory: the live allocations plus the records.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "analysis/replay.h"

namespace gpuleak::analyzer {

class AllocationLog : public Aggregator {
public:
    enum class Action : uint8_t { Alloc, Free, Oom };
    struct Record {
        uint64_t ts;
        uint64_t address; // Oom: the device's free bytes (0 = unknown)
        uint64_t size;    // Oom: the request
        uint32_t site;
        int16_t device;
        Action action;
    };
    struct Live {
        uint64_t address, size, ts;
        uint32_t site;
        int16_t device;
    };

    explicit AllocationLog(size_t max_records = 100000) : max_records_(max_records) {}

    void on_alloc(Allocation& a) override;
    void on_free(const Allocation& a, uint64_t ts, bool freed) override;
    void on_failed(const FailedAllocation& f) override;

    const std::deque<Record>& records() const { return records_; }
    uint64_t dropped() const { return dropped_; } // records older than the ones kept
    size_t max_records() const { return max_records_; }
    // Live device allocations at the end, by device and address.
    std::vector<Live> live() const;

private:
    void push(const Record& r);

    size_t max_records_;
    std::deque<Record> records_;
    uint64_t dropped_ = 0;
    std::unordered_map<uint64_t, Live> live_;
};

} // namespace gpuleak::analyzer
