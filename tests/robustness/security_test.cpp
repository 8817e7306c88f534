// The trace file is private and holds no secrets: created 0600 whatever the umask, never through a
// link or over a file (output_test.cpp), and only allow-listed environment variables are recorded.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "robustness_support.h"

namespace gpuleak::robustness {
namespace {

TEST(Security, TraceFileIsPrivateWhateverTheUmask) {
    mode_t old = umask(0);
    e2e::RunResult r = e2e::run({e2e::Paths::app("path_direct")}, {});
    umask(old);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.traces.size(), 1u);
    struct stat st {};
    ASSERT_EQ(stat(r.traces[0].c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

class EnvironmentAllowList : public testing::TestWithParam<const char*> {};

TEST_P(EnvironmentAllowList, OnlyAllowListedVariablesReachTheTrace) {
    e2e::RunOptions options;
    options.env["GPULEAK_COMPRESS"] = GetParam();
    options.env["SECRET_TOKEN"] = "hunter2-4f9a1c";
    options.env["AWS_SECRET_ACCESS_KEY"] = "wJalrXUtnFEMI-7e3b";
    options.env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True";
    options.env["GPULEAK_TEST_MARKER"] = "present";
    e2e::RunResult r = e2e::run({e2e::Paths::app("path_direct")}, options);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.traces.size(), 1u);
    // The file as stored and its blocks decompressed: a secret must be in neither.
    for (const std::string& bytes : {read_file(r.traces[0]), trace_payloads(r.traces[0])}) {
        EXPECT_EQ(bytes.find("hunter2-4f9a1c"), std::string::npos);
        EXPECT_EQ(bytes.find("SECRET_TOKEN"), std::string::npos);
        EXPECT_EQ(bytes.find("wJalrXUtnFEMI-7e3b"), std::string::npos);
    }
    std::string payloads = trace_payloads(r.traces[0]);
    EXPECT_NE(payloads.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"), std::string::npos);
    EXPECT_NE(payloads.find("GPULEAK_TEST_MARKER=present"), std::string::npos);
    EXPECT_NE(payloads.find("GPULEAK_COMPRESS="), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Robustness, EnvironmentAllowList, testing::Values("0", "1"),
                         [](const auto& info) {
                             return std::string(info.param[0] == '0' ? "raw" : "compressed");
                         });

} // namespace
} // namespace gpuleak::robustness
