// GPULEAK_* settings mean what they say: one boolean grammar, one size grammar (the gates' too),
// and a value that does not parse is one warning naming it while the program runs on with the
// default.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpuleak/format/reader.h"
#include "robustness_support.h"

namespace gpuleak::robustness {
namespace {

// path_direct: 13 allocations, checked by its own ground truth (exit 0 only if every call
// behaved).
const std::string kDirect = e2e::Paths::app("path_direct");
constexpr uint64_t kDirectAllocations = 13;

e2e::RunResult run_with(const std::map<std::string, std::string>& env,
                        const std::string& program = kDirect) {
    e2e::RunOptions options;
    options.env = env;
    return e2e::run({program}, options);
}

uint64_t allocations(const e2e::RunResult& r) {
    if (r.traces.empty()) return 0;
    return e2e::report(r.traces[0])["summary"]["allocations"];
}

// (raw blocks, zstd blocks) of a trace.
std::pair<size_t, size_t> block_kinds(const std::string& path) {
    format::TraceFile f;
    EXPECT_TRUE(f.open(path)) << f.error();
    f.index_blocks();
    size_t raw = 0, zstd = 0;
    for (const auto& b : f.blocks())
        ++((b.flags & format::kBlockZstd) ? zstd : raw);
    return {raw, zstd};
}

TEST(Settings, DisableTakesEveryBooleanSpelling) {
    for (const char* off : {"0", "no", "No", "false", "OFF"}) {
        SCOPED_TRACE(off);
        e2e::RunResult r = run_with({{"GPULEAK_DISABLE", off}});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        ASSERT_EQ(r.traces.size(), 1u) << r.output; // "no" used to disable
        EXPECT_EQ(allocations(r), kDirectAllocations);
        EXPECT_TRUE(preload_messages(r.output).empty()) << r.output;
    }
    for (const char* on : {"1", "yes", "TRUE", "on"}) {
        SCOPED_TRACE(on);
        e2e::RunResult r = run_with({{"GPULEAK_DISABLE", on}});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_TRUE(r.traces.empty());
    }
}

TEST(Settings, KeepDeepbindZeroClearsDeepbindAsUnset) {
    const std::string program = e2e::Paths::app("path_deepbind");
    for (const char* value : {"", "0", "no", "off"}) {
        SCOPED_TRACE(value);
        e2e::RunResult r =
            run_with(*value ? std::map<std::string, std::string>{{"GPULEAK_KEEP_DEEPBIND", value}}
                            : std::map<std::string, std::string>{},
                     program);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_EQ(allocations(r), 2u) << r.output; // "0" used to keep DEEPBIND: nothing seen
    }
    for (const char* value : {"1", "yes"}) {
        SCOPED_TRACE(value);
        e2e::RunResult r = run_with({{"GPULEAK_KEEP_DEEPBIND", value}}, program);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_EQ(allocations(r), 0u); // the library binds to libcuda past the hooks
    }
}

TEST(Settings, CompressTakesEveryBooleanSpelling) {
    for (const char* off : {"0", "off", "False"}) {
        e2e::RunResult r = run_with({{"GPULEAK_COMPRESS", off}});
        ASSERT_EQ(r.traces.size(), 1u) << r.output;
        auto [raw, zstd] = block_kinds(r.traces[0]);
        EXPECT_GT(raw, 0u) << off;
        EXPECT_EQ(zstd, 0u) << off;
    }
    for (const char* on : {"1", "On", "yes"}) {
        e2e::RunResult r = run_with({{"GPULEAK_COMPRESS", on}});
        ASSERT_EQ(r.traces.size(), 1u) << r.output;
        EXPECT_GT(block_kinds(r.traces[0]).second, 0u) << on;
    }
}

TEST(Settings, MaxBytesReadsSizesAsTheGatesDo) {
    const std::vector<std::string> busy = {e2e::Paths::app("scenario_threads"), "20000"};
    e2e::RunOptions options;
    // 1.5G used to become 1 byte (then 4 KiB): the trace is far smaller, so nothing is capped.
    options.env["GPULEAK_MAX_BYTES"] = "1.5G";
    e2e::RunResult r = e2e::run(busy, options);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(preload_messages(r.output).empty()) << r.output;
    ASSERT_EQ(r.traces.size(), 1u);
    Json rep = e2e::report(r.traces[0]);
    EXPECT_EQ(rep["summary"]["allocations"], 8u * 20000 + 8);
    EXPECT_TRUE(rep["warnings"].empty()) << rep["warnings"];

    for (const char* size : {"64KiB", "64 kb", "0.0625M"}) {
        SCOPED_TRACE(size);
        options.env["GPULEAK_MAX_BYTES"] = size;
        r = e2e::run(busy, options);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        ASSERT_EQ(r.traces.size(), 1u);
        EXPECT_LE(std::filesystem::file_size(r.traces[0]), 65536u);
        auto messages = preload_messages(r.output);
        ASSERT_EQ(messages.size(), 1u) << r.output;
        EXPECT_NE(messages[0].find("GPULEAK_MAX_BYTES=65536 bytes"), std::string::npos)
            << messages[0];
    }

    // The same grammar in the report's gates: 1.5GB passes a peak of ~33 KB, 1KB fails it.
    options.env.erase("GPULEAK_MAX_BYTES");
    r = e2e::run({e2e::Paths::app("scenario_threads"), "10"}, options);
    ASSERT_EQ(r.traces.size(), 1u);
    EXPECT_EQ(run_report({r.traces[0], "--max-peak", "1.5GB"}).exit_code, 0);
    EXPECT_EQ(
        run_report({r.traces[0], "--max-peak", "1.5 gib", "--max-live-end", "1.5g"}).exit_code, 0);
    ReportRun fail = run_report({r.traces[0], "--max-peak", "1KB"});
    EXPECT_EQ(fail.exit_code, 1);
    EXPECT_NE(fail.err.find("--max-peak"), std::string::npos) << fail.err;
    ReportRun bad = run_report({r.traces[0], "--max-peak", "1.5XB"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_EQ(count(bad.err, "\n"), 1u) << bad.err;
}

// Each value that does not parse: one warning naming the variable and the value, the default
// used, the program unharmed and fully traced.
TEST(Settings, AValueThatDoesNotParseIsOneWarningAndTheDefault) {
    struct Case {
        const char* name;
        const char* value;
        const char* says;
    };
    const Case cases[] = {
        {"GPULEAK_DISABLE", "perhaps", "GPULEAK_DISABLE=perhaps: not a boolean"},
        {"GPULEAK_COMPRESS", "maybe", "GPULEAK_COMPRESS=maybe: not a boolean"},
        {"GPULEAK_SIGNALS", "2", "GPULEAK_SIGNALS=2: not a boolean"},
        {"GPULEAK_PYTHON", "sometimes", "GPULEAK_PYTHON=sometimes: not a boolean"},
        {"GPULEAK_MAX_BYTES", "12XB", "GPULEAK_MAX_BYTES=12XB: not a size"},
        {"GPULEAK_MAX_BYTES", "100", "GPULEAK_MAX_BYTES=100: below the minimum; using 4096"},
        {"GPULEAK_STACK_DEPTH", "deep", "GPULEAK_STACK_DEPTH=deep: not a whole number; using 256"},
        {"GPULEAK_STACK_DEPTH", "1M", "GPULEAK_STACK_DEPTH=1M: not a whole number"},
        {"GPULEAK_FLUSH_MS", "99999", "GPULEAK_FLUSH_MS=99999: out of range 1..10000; using 10000"},
        {"GPULEAK_LOG", "loud", "GPULEAK_LOG=loud: not one of debug, info, warn, off"},
        {"GPULEAK_UNWIND", "dwarf", "GPULEAK_UNWIND=dwarf: not one of fast, libunwind; using fast"},
        {"GPULEAK_CLOCK", "sundial",
         "GPULEAK_CLOCK=sundial: not one of auto, monotonic; using auto"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.name) + "=" + c.value);
        e2e::RunResult r = run_with({{c.name, c.value}});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        auto messages = preload_messages(r.output);
        ASSERT_EQ(messages.size(), 1u) << r.output;
        EXPECT_NE(messages[0].find(c.says), std::string::npos) << messages[0];
        ASSERT_EQ(r.traces.size(), 1u) << r.output;
        if (std::string(c.value) != "100") { // 4 KiB holds only part of the trace
            EXPECT_EQ(allocations(r), kDirectAllocations);
        }
    }
    // With the default kept, COMPRESS=maybe still compresses.
    e2e::RunResult r = run_with({{"GPULEAK_COMPRESS", "maybe"}});
    ASSERT_EQ(r.traces.size(), 1u);
    EXPECT_GT(block_kinds(r.traces[0]).second, 0u);
    // Bad values everywhere at once: still one line each.
    r = run_with({{"GPULEAK_COMPRESS", "maybe"}, {"GPULEAK_STACK_DEPTH", "deep"}});
    EXPECT_EQ(preload_messages(r.output).size(), 2u) << r.output;
}

// The events' clock from clock_gettime instead of the TSC (session/event_clock.h): the same trace.
TEST(Settings, ClockMonotonicRecordsWhatTheDefaultClockDoes) {
    for (const char* clock : {"monotonic", "auto"}) {
        SCOPED_TRACE(std::string("GPULEAK_CLOCK=") + clock);
        e2e::RunResult r = run_with({{"GPULEAK_CLOCK", clock}});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_TRUE(preload_messages(r.output).empty()) << r.output;
        ASSERT_EQ(r.traces.size(), 1u) << r.output;
        EXPECT_EQ(allocations(r), kDirectAllocations);
    }
}

TEST(Settings, KeepDeepbindThatDoesNotParseWarnsOnceAndClears) {
    e2e::RunResult r =
        run_with({{"GPULEAK_KEEP_DEEPBIND", "sure"}}, e2e::Paths::app("path_deepbind"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto messages = preload_messages(r.output);
    ASSERT_EQ(messages.size(), 1u) << r.output;
    EXPECT_NE(messages[0].find("GPULEAK_KEEP_DEEPBIND=sure: not a boolean"), std::string::npos);
    EXPECT_EQ(allocations(r), 2u);
}

} // namespace
} // namespace gpuleak::robustness
