// The order of a job's processes in its reports (analysis/analyze.h, order_parents_first).
#include <gtest/gtest.h>

#include "analysis/analyze.h"

namespace gpuleak::analyzer {
namespace {

std::unique_ptr<Analysis> process(uint64_t pid, uint64_t ppid, bool named = true) {
    auto a = std::make_unique<Analysis>();
    a->trace.have_process = named;
    a->trace.process.pid = pid;
    a->trace.process.ppid = ppid;
    return a;
}

std::vector<uint64_t> pids(const std::vector<std::unique_ptr<Analysis>>& analyses) {
    std::vector<uint64_t> out;
    for (const auto& a : analyses)
        out.push_back(a->trace.process.pid);
    return out;
}

// Files sorted by name put a child whose pid wrapped around (301) before its parent (32760), and
// gpuleak.10004.bin before gpuleak.9998.bin: each process comes after the one that started it.
TEST(ProcessOrder, EachAfterTheProcessThatStartedIt) {
    std::vector<std::unique_ptr<Analysis>> job;
    job.push_back(process(301, 32760));
    job.push_back(process(10004, 9998));
    job.push_back(process(305, 301));
    job.push_back(process(32760, 1));
    job.push_back(process(9998, 1));
    order_parents_first(job);
    EXPECT_EQ(pids(job), (std::vector<uint64_t>{32760, 9998, 301, 10004, 305}));
}

// Siblings (ranks started by a launcher that was not traced) keep the order they were given in;
// a trace without its process record is left where it is; a pid that reappears as its own
// ancestor (reused) does not loop.
TEST(ProcessOrder, SiblingsAndUnnamedTracesKeepTheirOrder) {
    std::vector<std::unique_ptr<Analysis>> job;
    job.push_back(process(40, 7));
    job.push_back(process(0, 0, false));
    job.push_back(process(30, 7));
    job.push_back(process(0, 0, false));
    job.push_back(process(50, 60));
    job.push_back(process(60, 50));
    order_parents_first(job);
    EXPECT_EQ(pids(job), (std::vector<uint64_t>{40, 0, 30, 0, 50, 60}));
}

} // namespace
} // namespace gpuleak::analyzer
