// The largest single requests, largest first (equal sizes in the order they came).
#pragma once

#include "analysis/replay.h"

namespace gpuleak::analyzer {

class Largest : public Aggregator {
public:
    void on_alloc(Allocation& a) override;
    void finish(uint64_t end_ts, Report& report) override;

private:
    static constexpr size_t kKept = 10;
    std::vector<LargestAllocation> largest_;
};

} // namespace gpuleak::analyzer
