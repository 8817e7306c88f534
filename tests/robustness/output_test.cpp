// Where the trace cannot be written as asked: no such directory, a file or link already there, a
// full disk, a file size limit, GPULEAK_MAX_BYTES. Tracing stops with one warning; the program runs
// to the exit status it has without the tracer; what was written stays readable.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "robustness_support.h"

namespace gpuleak::robustness {
namespace {

namespace fs = std::filesystem;

// scenario_threads checks its own ground truth (fake driver counters) and exits 0 only if every
// call behaved; 20000 pairs per thread make a trace of a few hundred KiB.
const std::vector<std::string> kBusyProgram = {e2e::Paths::app("scenario_threads"), "20000"};

std::string temp_dir() {
    std::string templ = (fs::temp_directory_path() / "gpuleak-output-XXXXXX").string();
    return mkdtemp(templ.data());
}

size_t warnings_containing(const std::string& output, const std::string& text) {
    size_t n = 0;
    for (const auto& line : preload_messages(output))
        n += line.find(text) != std::string::npos;
    return n;
}

// Tracing stopped part-way: the program still exited 0, gpuleak said one thing (`warning`) and
// left one trace no larger than `max_bytes`, whose JSON report goes to `report`.
void expect_stopped_part_way(const e2e::RunResult& r, const std::string& warning,
                             uint64_t max_bytes, Json& report) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(preload_messages(r.output).size(), 1u) << r.output;
    EXPECT_EQ(warnings_containing(r.output, warning), 1u) << r.output;
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    EXPECT_LE(fs::file_size(r.traces[0]), max_bytes);
    report = e2e::report(r.traces[0]);
}

std::string unwritable_case_name(size_t index) {
    static const char* const kNames[] = {"no_such_directory", "procfs", "not_a_directory"};
    return kNames[index];
}

class UnwritableOutput : public testing::TestWithParam<const char*> {};

TEST_P(UnwritableOutput, RunsUntracedWithOneWarning) {
    e2e::RunOptions options;
    options.env["GPULEAK_OUTPUT"] = GetParam();
    e2e::RunResult r = e2e::run(kBusyProgram, options);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(preload_messages(r.output).size(), 1u) << r.output;
    EXPECT_EQ(warnings_containing(r.output, "cannot create trace file"), 1u) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Robustness, UnwritableOutput,
                         testing::Values("/nonexistent-gpuleak-dir/t.%p.bin", // ENOENT
                                         "/proc/gpuleak-t.%p.bin",            // procfs refuses
                                         "/dev/null/t.%p.bin"),               // ENOTDIR
                         [](const auto& info) { return unwritable_case_name(info.index); });

TEST(Output, SymlinkAtTheOutputPathIsNeverFollowed) {
    std::string dir = temp_dir();
    write_file(dir + "/victim", "precious");
    fs::create_symlink(dir + "/victim", dir + "/trace.bin");
    fs::create_symlink(dir + "/not-created", dir + "/dangling.bin");
    for (const char* name : {"trace.bin", "dangling.bin"}) {
        SCOPED_TRACE(name);
        e2e::RunOptions options;
        options.env["GPULEAK_OUTPUT"] = dir + "/" + name;
        e2e::RunResult r = e2e::run(kBusyProgram, options);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_EQ(preload_messages(r.output).size(), 1u) << r.output;
    }
    EXPECT_EQ(read_file(dir + "/victim"), "precious");
    EXPECT_FALSE(fs::exists(dir + "/not-created"));
    fs::remove_all(dir);
}

TEST(Output, ExistingFileIsNeverOverwritten) {
    std::string dir = temp_dir();
    write_file(dir + "/trace.bin", "someone else's data");
    e2e::RunOptions options;
    options.env["GPULEAK_OUTPUT"] = dir + "/trace.bin";
    e2e::RunResult r = e2e::run(kBusyProgram, options);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(warnings_containing(r.output, "never overwrites"), 1u) << r.output;
    EXPECT_EQ(read_file(dir + "/trace.bin"), "someone else's data");
    fs::remove_all(dir);
}

// A real full disk: a 128 KiB tmpfs in a private mount namespace (unprivileged user namespace),
// raw blocks so the trace outgrows it. The trace is copied out before the namespace, and the tmpfs
// with it, goes away.
TEST(Output, FullDiskStopsTracingAndKeepsACleanPrefix) {
    if (e2e::shell("unshare -r -m true") != 0)
        GTEST_SKIP() << "no unprivileged mount namespaces here";
    std::vector<std::string> argv = {"unshare",
                                     "-r",
                                     "-m",
                                     "sh",
                                     "-c",
                                     "mkdir full && mount -t tmpfs -o size=128k tmpfs full && "
                                     "\"$@\"; rc=$?; cp full/*.bin . ; exit $rc",
                                     "sh"};
    argv.insert(argv.end(), kBusyProgram.begin(), kBusyProgram.end());
    e2e::RunOptions options;
    options.env["GPULEAK_OUTPUT"] = "full/t.%p.bin";
    options.env["GPULEAK_COMPRESS"] = "0";
    e2e::RunResult r = e2e::run(argv, options);
    Json rep;
    ASSERT_NO_FATAL_FAILURE(
        expect_stopped_part_way(r, "No space left on device", 128u * 1024, rep));
    // Cut back to the last whole block: readable, and not reported as damaged.
    EXPECT_GT(rep["summary"]["allocations"], 0u);
    EXPECT_LT(rep["summary"]["allocations"], 8u * 20000 + 8);
    for (const auto& w : rep["warnings"])
        EXPECT_EQ(w.get<std::string>().find("damaged"), std::string::npos) << w;
}

// RLIMIT_FSIZE: a write past it fails with EFBIG and raises SIGXFSZ, whose default action would
// kill the program. The limit is treated like GPULEAK_MAX_BYTES instead.
TEST(Output, FileSizeLimitCapsTheTraceAndNeverKillsTheProgram) {
    if (e2e::shell("prlimit --version") != 0)
        GTEST_SKIP() << "prlimit (util-linux) is not installed";
    std::vector<std::string> argv = {"prlimit", "--fsize=65536", "--"};
    argv.insert(argv.end(), kBusyProgram.begin(), kBusyProgram.end());
    e2e::RunResult r = e2e::run(argv, {});
    Json rep;
    ASSERT_NO_FATAL_FAILURE(expect_stopped_part_way(r, "file size limit", 65536u, rep));
    ASSERT_FALSE(rep["warnings"].empty());
    EXPECT_NE(rep["warnings"][0].get<std::string>().find("trace capped at"), std::string::npos)
        << rep["warnings"];
}

TEST(Output, MaxBytesCapsTheTraceAndMarksIt) {
    e2e::RunOptions options;
    options.env["GPULEAK_MAX_BYTES"] = "64K";
    e2e::RunResult r = e2e::run(kBusyProgram, options);
    Json rep;
    ASSERT_NO_FATAL_FAILURE(expect_stopped_part_way(r, "GPULEAK_MAX_BYTES=65536", 65536u, rep));
    EXPECT_GT(rep["summary"]["allocations"], 0u);
    EXPECT_LT(rep["summary"]["allocations"], 8u * 20000 + 8);
    // Capped, but the process still exited cleanly: exactly one warning, the cap.
    ASSERT_EQ(rep["warnings"].size(), 1u) << rep["warnings"];
    EXPECT_EQ(rep["warnings"][0].get<std::string>().rfind("trace capped at ", 0), 0u)
        << rep["warnings"];
    ReportRun text = run_report({r.traces[0]});
    EXPECT_EQ(text.exit_code, 0);
    EXPECT_NE((text.out + text.err).find("trace capped at"), std::string::npos)
        << text.out << text.err;
}

} // namespace
} // namespace gpuleak::robustness
