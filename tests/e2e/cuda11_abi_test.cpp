// CUDA 11.3-11.8 declare cudaGetDriverEntryPoint[_ptsz] with three arguments. The preload's export
// of the same name must follow the ABI of the runtime actually loaded: called the CUDA 11 way, with
// a poisoned address where CUDA 12 passes `driverStatus`, the program must behave exactly as
// without the preload (tests/apps/cuda11_entry_point.c), and its allocations must be traced.
#include <gtest/gtest.h>

#include "e2e_support.h"

namespace gpuleak::e2e {
namespace {

TEST(Cuda11Abi, EntryPointWithGarbageInTheFourthArgument) {
    RunOptions plain;
    plain.preload = false;
    RunResult without = run({Paths::app("cuda11_entry_point")}, plain);
    ASSERT_EQ(without.exit_code, 0) << without.output;

    RunOptions traced;
    traced.env["APPS_EXPECT_MODULE"] = "libgpuleak";
    RunResult with = run({Paths::app("cuda11_entry_point")}, traced);
    ASSERT_EQ(with.exit_code, 0) << with.output; // 139 (SIGSEGV) if the hook reads `status`
    EXPECT_EQ(with.output, without.output);
    ASSERT_EQ(with.traces.size(), 1u) << with.output;

    Json rep = report(with.traces[0]);
    EXPECT_EQ(rep["summary"]["allocations"], 2);
    EXPECT_EQ(rep["summary"]["frees"], 1);
    EXPECT_EQ(rep["summary"]["live_bytes_end"], 7000011);
    const Json* leak = site_by_function(rep, "cuda11_leak");
    ASSERT_NE(leak, nullptr) << rep["sites"].dump(1);
    EXPECT_EQ((*leak)["live_bytes_end"], 7000011);
    EXPECT_EQ((*leak)["apis"], Json::array({"cuMemAlloc_v2"}));
    const Json* ptsz = site_by_function(rep, "cuda11_ptsz_transient");
    ASSERT_NE(ptsz, nullptr);
    EXPECT_EQ((*ptsz)["bytes_allocated"], 7000012);
    EXPECT_EQ((*ptsz)["live_bytes_end"], 0);
    EXPECT_EQ((*ptsz)["apis"], Json::array({"cuMemAllocAsync_ptsz"}));
}

} // namespace
} // namespace gpuleak::e2e
