// gpuleak-report on files that are not what they claim: empty, foreign, wrong version, cut short,
// bit-flipped, or well-framed blocks (valid checksums) holding hostile records. The answer is
// always either a one-line error naming the file with exit status 2, or a report of the readable
// part with a warning (exit 0); never a crash, a hang or a runaway allocation.
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "gpuleak/format/encoder.h"
#include "gpuleak/format/records.h"
#include "gpuleak/format/writer.h"
#include "robustness_support.h"

namespace gpuleak::robustness {
namespace {

namespace fs = std::filesystem;
using format::Encoder;
using format::Tag;

// A trace built block by block with format's writer; `tweak` may break a block's header after it
// is framed (the checksum is then recomputed over what is really stored), and raw() appends any
// bytes. Version 1 by default: there each record carries its own time delta, so a case can put any
// bytes in any order; the time column of version 2 has cases of its own.
class HostileTrace {
public:
    explicit HostileTrace(uint32_t version = 1, uint32_t header_size = 16)
        : state_(std::make_unique<State>()) {
        format::FileHeader h = format::file_header(version);
        h.header_size = header_size;
        append(&h, sizeof h);
    }
    // One block of `payload` for `thread`, zstd-compressed if `zstd` (the payload must then be
    // compressible).
    HostileTrace& block(uint32_t thread, uint64_t sequence, const std::string& payload,
                        bool zstd = false,
                        const std::function<void(format::BlockHeader&)>& tweak = {}) {
        format::TraceWriter& w = zstd ? state_->zstd : state_->raw;
        format::BlockMeta meta{thread, sequence, 1000, 1000 + payload.size()};
        auto* data = reinterpret_cast<const uint8_t*>(payload.data());
        auto size = static_cast<uint32_t>(payload.size());
        if (!tweak) {
            EXPECT_EQ(w.write_block(meta, data, size).kind, format::WriteStatus::Written);
            return *this;
        }
        format::FramedBlock b = w.frame(meta, data, size);
        EXPECT_EQ((b.header.flags & format::kBlockZstd) != 0, zstd) << "payload not compressible";
        const uint32_t stored = b.header.stored_size;
        tweak(b.header);
        b.header.checksum = format::block_checksum(b.header, b.stored, stored);
        append(&b.header, sizeof b.header);
        append(b.stored, stored);
        return *this;
    }
    HostileTrace& raw(const std::string& bytes) {
        append(bytes.data(), bytes.size());
        return *this;
    }
    std::string bytes() const {
        const auto& b = state_->sink.bytes();
        return std::string(b.begin(), b.end());
    }

private:
    struct State {
        format::MemorySink sink;
        format::TraceWriter raw{sink, {.compress = false}};
        format::TraceWriter zstd{sink, {.compress = true}};
    };
    void append(const void* p, size_t n) {
        format::Piece piece{p, n};
        EXPECT_EQ(state_->sink.append(&piece, 1), 0);
    }
    std::unique_ptr<State> state_;
};

// Records with their time deltas inside them (version 1).
std::string records(const std::function<void(Encoder&)>& fill, size_t capacity = 1 << 20) {
    std::string buf(capacity, '\0');
    auto* begin = reinterpret_cast<uint8_t*>(buf.data());
    auto e = Encoder::with_inline_time(begin, begin + buf.size());
    fill(e);
    buf.resize(static_cast<size_t>(e.position() - begin));
    return buf;
}

std::string process_record() {
    return records([](Encoder& e) {
        format::put::process(e, 4242, 1, 0, "/usr/bin/hostile", std::vector<std::string>{"hostile"},
                             std::vector<std::string>{}, "test");
    });
}

std::string alloc_record(uint64_t dt, uint64_t address, uint64_t size, uint64_t stack = 0) {
    return records([&](Encoder& e) {
        format::put::alloc(e, dt, format::Api::cuMemAlloc_v2, format::MemKind::Device, 0, address,
                           size, stack, 0);
    });
}

// Compressible: the same allocation `n` times.
std::string alloc_records(uint64_t address, uint64_t size, int n) {
    std::string out;
    for (int i = 0; i < n; ++i)
        out += alloc_record(1, address + i * 0x1000, size);
    return out;
}

// A valid start every hostile case builds on: the process record and one allocation.
HostileTrace valid_prefix() {
    HostileTrace t;
    t.block(0, 0, process_record());
    t.block(1, 0, alloc_record(0, 0x10000, 4096));
    return t;
}

class AnalyzerInput : public testing::Test {
protected:
    void SetUp() override {
        std::string templ = (fs::temp_directory_path() / "gpuleak-input-XXXXXX").string();
        dir_ = mkdtemp(templ.data());
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Runs the analyzer on `bytes` (text and JSON) and checks the contract; returns the JSON run.
    ReportRun check(const std::string& name, const std::string& bytes, int want_exit = -1) {
        SCOPED_TRACE(name);
        std::string path = dir_ + "/" + name;
        write_file(path, bytes);
        ReportRun json;
        for (bool as_json : {false, true}) {
            std::vector<std::string> args{path};
            if (as_json) args.insert(args.end(), {"--format", "json"});
            ReportRun r = run_report(args, 30);
            EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << "exit " << r.exit_code << "\n"
                                                              << r.err;
            if (want_exit >= 0) {
                EXPECT_EQ(r.exit_code, want_exit) << r.err;
            }
            if (r.exit_code == 2) {
                EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
                EXPECT_EQ(r.err.rfind("gpuleak-report: " + path + ": ", 0), 0u) << r.err;
            }
            if (r.exit_code == 0 && as_json) {
                Json j = Json::parse(r.out, nullptr, false);
                EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 400);
            }
            if (as_json) json = r;
        }
        return json;
    }
    // A damaged file must be reported with a warning, not silently.
    void check_warns(const std::string& name, const std::string& bytes,
                     const std::string& warning) {
        ReportRun r = check(name, bytes, 0);
        Json j = Json::parse(r.out, nullptr, false);
        ASSERT_FALSE(j.is_discarded());
        std::string all = j["warnings"].dump();
        EXPECT_NE(all.find(warning), std::string::npos) << name << ": " << all;
    }

    std::string dir_;
};

TEST_F(AnalyzerInput, FilesThatAreNoTraceAreRefusedInOneLine) {
    std::string header = HostileTrace().bytes();
    auto expect_error = [&](const std::string& name, const std::string& bytes,
                            const std::string& what) {
        ReportRun r = check(name, bytes, 2);
        EXPECT_NE(r.err.find(what), std::string::npos) << name << ": " << r.err;
    };
    expect_error("empty", "", "shorter than the 16-byte header");
    expect_error("short", header.substr(0, 15), "shorter than the 16-byte header");
    expect_error("foreign", "#!/bin/sh\necho this is not a trace\n", "bad magic");
    expect_error("version0", HostileTrace(0).bytes(), "unsupported trace format version 0");
    expect_error("version3", HostileTrace(3).bytes(), "unsupported trace format version 3");
    expect_error("version-max", HostileTrace(0xffffffffu).bytes(),
                 "unsupported trace format version");
    expect_error("header-size-small", HostileTrace(1, 8).bytes(), "corrupt file header");
    expect_error("header-size-huge", HostileTrace(1, 1u << 30).bytes(), "corrupt file header");
    expect_error("header-only", header, "holds no data");
    expect_error("header-then-garbage", header + std::string(300, '\x5a'), "holds no data");
}

// Paths that are no file at all get the same one line: the tool's name, the path, what is wrong.
TEST_F(AnalyzerInput, MissingFilesAndDirectoriesAreRefusedInOneLine) {
    const std::string missing = dir_ + "/no-such-trace.bin";
    for (const auto& [path, what] : std::vector<std::pair<std::string, std::string>>{
             {missing, "cannot open: No such file or directory"},
             {dir_, "not a regular file (a trace is read from a file, not a pipe or device)"}}) {
        ReportRun r = run_report({path});
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_EQ(r.err, "gpuleak-report: " + path + ": " + what + "\n");
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    // Next to a readable trace: that one is still reported, the missing one named, exit 2.
    std::string good = dir_ + "/good.bin";
    write_file(good, valid_prefix().bytes());
    ReportRun r = run_report({good, missing, "--format", "json"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "gpuleak-report: " + missing + ": cannot open: No such file or directory\n");
    Json j = Json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
}

TEST_F(AnalyzerInput, DamagedBlocksEndTheReadablePrefixWithAWarning) {
    std::string prefix = valid_prefix().bytes();
    auto tail = [](const std::function<void(format::BlockHeader&)>& tweak, bool zstd = false) {
        HostileTrace t = valid_prefix();
        t.block(1, 1, zstd ? alloc_records(0x20000, 8192, 32) : alloc_record(5, 0x20000, 8192),
                zstd, tweak);
        return t.bytes();
    };
    check_warns("oversized-block", tail([](auto& h) { h.stored_size = h.raw_size = 2u << 20; }),
                "corrupt block header");
    check_warns("unknown-flags", tail([](auto& h) { h.flags |= 0x80; }), "corrupt block header");
    check_warns("time-backwards", tail([](auto& h) { h.last_ts = 0; }), "corrupt block header");
    check_warns("sizes-disagree", tail([](auto& h) { h.raw_size += 1; }), "corrupt block header");
    check_warns("past-the-end", tail([](auto& h) { h.stored_size += 100, h.raw_size += 100; }),
                "cut short");
    check_warns("zstd-lies", tail([](auto& h) { h.raw_size += 7; }, true), "decompress");
    check_warns("zstd-garbage",
                HostileTrace(valid_prefix())
                    .raw("")
                    .block(1, 1, std::string(64, '\x33'), false,
                           [](auto& h) {
                               h.flags = format::kBlockZstd;
                               h.raw_size = 4096;
                           })
                    .bytes(),
                "decompress");
    std::string bad_checksum = tail({});
    bad_checksum[prefix.size() + 12] ^= 0x01; // the checksum field of the last block
    check_warns("bad-checksum", bad_checksum, "checksum mismatch");
    check_warns("bad-block-magic", prefix + std::string(48, '\0'), "bad block magic");
    check_warns("half-header", prefix + tail({}).substr(prefix.size(), 20),
                "incomplete block header");
}

TEST_F(AnalyzerInput, HostileRecordsInValidBlocksAreReportedNotTrusted) {
    struct Case {
        const char* name;
        std::string payload;
        const char* warning;
    };
    std::vector<Case> cases = {
        {"unknown-tag", std::string("\x63\x01\x02", 3), "unknown record tag 99"},
        {"varint-too-long", std::string(1, '\x05') + std::string(12, '\xff'), "varint too long"},
        {"truncated-record", alloc_record(0, 0x30000, 1).substr(0, 4), "record truncated"},
        {"string-longer-than-block", records([](Encoder& e) {
             e.tag(Tag::Marker);
             e.varint(0);
             e.varint(1ull << 40);
         }),
         "string length out of range"},
        {"argc-huge", records([](Encoder& e) {
             e.tag(Tag::Process);
             e.varint(1), e.varint(1), e.varint(0);
             e.string("x");
             e.varint(1ull << 40);
         }),
         "too many arguments"},
        {"segments-huge", records([](Encoder& e) {
             e.tag(Tag::Module);
             e.varint(0), e.varint(0);
             e.string("/nonexistent/libx.so");
             e.string("");
             e.varint(1000000);
         }),
         "too many segments"},
        {"bad-kind", records([](Encoder& e) {
             e.tag(Tag::Alloc);
             for (uint64_t v : {0ull, 1ull, 9ull, 0ull, 1ull, 1ull, 0ull, 0ull})
                 e.varint(v);
         }),
         "bad memory kind"},
        {"bad-space", records([](Encoder& e) {
             e.tag(Tag::Free);
             for (uint64_t v : {0ull, 4ull, 7ull, 1ull, 0ull})
                 e.varint(v);
         }),
         "bad address space"},
    };
    for (const Case& c : cases) {
        HostileTrace t = valid_prefix();
        t.block(2, 0, c.payload);
        check_warns(c.name, t.bytes(), c.warning);
    }
}

// A version-2 block as the recorder lays it out, then its column's size replaced by `column`.
std::string column_block(const std::function<void(Encoder&)>& fill,
                         std::optional<uint32_t> column) {
    std::string buf(4096, '\0');
    auto* begin = reinterpret_cast<uint8_t*>(buf.data());
    uint8_t* top = begin + buf.size() - format::kTimeTrailerBytes;
    Encoder e(begin, top);
    fill(e);
    buf.resize(format::pack_block(begin, static_cast<uint32_t>(e.position() - begin), top,
                                  static_cast<uint32_t>(top - e.column())));
    if (column)
        for (uint32_t i = 0; i < format::kTimeTrailerBytes; ++i)
            buf[buf.size() - format::kTimeTrailerBytes + i] = static_cast<char>(*column >> (8 * i));
    return buf;
}

// The time column of a version-2 block is bounded like every other length: a column that claims
// more than its block, one that runs out before its records, one with deltas left over.
TEST_F(AnalyzerInput, HostileTimeColumnsAreReportedNotTrusted) {
    auto two_allocs = [](Encoder& e) {
        for (uint64_t address : {0x20000, 0x21000})
            format::put::alloc(e, 300, format::Api::cuMemAlloc_v2, format::MemKind::Device, 0,
                               address, 64, 0, 0);
    };
    struct Case {
        const char* name;
        std::string payload;
        const char* warning;
    };
    std::vector<Case> cases = {
        {"column-larger-than-block", column_block(two_allocs, 1u << 30),
         "block too short for its time column"},
        {"column-runs-out", column_block(two_allocs, 2), "time column shorter than its records"},
        {"column-left-over", column_block([&](Encoder& e) { two_allocs(e), e.time(9); }, {}),
         "time column longer than its records"},
        {"no-trailer", std::string("\x05", 1), "block too short for its time column"},
    };
    for (const Case& c : cases) {
        HostileTrace t(2);
        t.block(0, 0,
                column_block(
                    [](Encoder& e) {
                        format::put::process(e, 4242, 1, 0, "/usr/bin/hostile",
                                             std::vector<std::string>{"hostile"},
                                             std::vector<std::string>{}, "test");
                    },
                    {}));
        t.block(1, 0, column_block(two_allocs, {}));
        t.block(2, 0, c.payload);
        ReportRun r = check(c.name, t.bytes(), 0);
        Json j = Json::parse(r.out, nullptr, false);
        ASSERT_FALSE(j.is_discarded());
        EXPECT_NE(j["warnings"].dump().find(c.warning), std::string::npos)
            << c.name << ": " << j["warnings"].dump();
        // Thread 1's block is whole: its two allocations are reported, 300 ns apart.
        EXPECT_GE(j["summary"]["allocations"].get<int>(), 2) << c.name;
    }
}

TEST_F(AnalyzerInput, InconsistentButWellFormedRecordsGiveAReport) {
    // A command line that is not UTF-8 (it reaches the JSON as the report's "command").
    HostileTrace t;
    t.block(0, 0, records([](Encoder& e) {
                e.tag(Tag::Process), e.varint(4242), e.varint(1), e.varint(0);
                e.string("/usr/bin/hostile");
                e.varint(2), e.string("hostile"), e.string(std::string("caf\xe9 \xff\xfe", 7));
                e.varint(0);
                e.string("test");
            }));
    t.block(1, 0, alloc_record(0, 0x10000, 4096));
    // Stacks and frees that refer to nothing, extreme values, out-of-range API numbers, duplicated
    // and wildly numbered blocks, thread indexes at the limit.
    t.block(3, 0, records([](Encoder& e) {
                e.tag(Tag::StackNode), e.varint(7), e.varint(12345), e.varint(0xdeadbeef);
                e.tag(Tag::Alloc);
                for (uint64_t v : {0ull, 200ull, 0ull})
                    e.varint(v);
                e.svarint(-5);
                for (uint64_t v : {~0ull, ~0ull, 999ull, 999ull})
                    e.varint(v);
                e.tag(Tag::Free);
                for (uint64_t v : {1ull, 4ull, 0ull, 0x77ull})
                    e.varint(v);
                e.svarint(0);
                e.tag(Tag::VmmRelease), e.varint(1), e.varint(0x1234);
                e.tag(Tag::VmmUnmap), e.varint(1), e.varint(0), e.varint(~0ull);
                e.tag(Tag::Marker), e.varint(1),
                    e.string(std::string("\xff\xfe invalid utf-8 \xc3", 19));
                e.tag(Tag::PyStackNode), e.varint(1), e.varint(99), e.varint(5), e.svarint(-3),
                    e.varint(1);
                e.tag(Tag::PyCode), e.varint(5), e.string("f.py"), e.string("q"), e.svarint(-1),
                    e.string("\x80\x80\x80");
            }));
    t.block(3, 0, alloc_record(0, 0x40000, 1));           // duplicate sequence
    t.block(3, ~0ull, alloc_record(0, 0x50000, 1));       // huge sequence
    t.block(0xffffffffu, 0, alloc_record(0, 0x60000, 1)); // largest thread index
    t.block(1, 1, records([](Encoder& e) {                // a Capped record ends the recording
                e.tag(Tag::Capped), e.varint(0), e.varint(123456);
            }));
    check_warns("inconsistent", t.bytes(), "trace capped at 123456 bytes");
}

// Holes in a thread's block numbers: blocks that were never written (a writer that lost one, a
// file edited by hand). The report counts what is there and says how much is not.
TEST_F(AnalyzerInput, MissingBlocksOfAThreadAreNamedInAWarning) {
    HostileTrace t;
    t.block(0, 0, process_record());
    for (uint64_t sequence : {0, 1, 3, 6})
        t.block(1, sequence, alloc_record(1, 0x10000 + sequence * 0x1000, 4096));
    t.block(2, 0, alloc_record(1, 0x90000, 8));
    t.block(2, 1, alloc_record(1, 0x91000, 8));
    t.block(0, format::kCappedSequence,
            records([](Encoder& e) { e.tag(Tag::Capped), e.varint(0), e.varint(999999); }));
    ReportRun r = check("holes", t.bytes(), 0);
    Json j = Json::parse(r.out);
    EXPECT_EQ(j["summary"]["allocations"], 6u);
    std::string all = j["warnings"].dump();
    EXPECT_NE(all.find("3 block(s) of 1 thread(s) are missing"), std::string::npos) << all;

    // The same blocks without the holes: no such warning.
    HostileTrace whole;
    whole.block(0, 0, process_record());
    for (uint64_t sequence : {0, 1, 2})
        whole.block(1, sequence, alloc_record(1, 0x10000 + sequence * 0x1000, 4096));
    r = check("whole", whole.bytes(), 0);
    EXPECT_EQ(r.out.find("are missing from the trace"), std::string::npos)
        << Json::parse(r.out)["warnings"].dump();
}

// Ids far apart in one thread: a table indexed by id must not grow with the ids' values.
TEST_F(AnalyzerInput, SparseIdsCannotMakeTheReaderAllocateWithoutBound) {
    HostileTrace t = valid_prefix();
    t.block(4, 0, records([](Encoder& e) {
                for (uint64_t i = 1; i <= 40000; ++i) {
                    e.tag(Tag::StackNode), e.varint(i * 65535), e.varint(0), e.varint(0x1000 + i);
                    e.tag(Tag::PyStackNode), e.varint(i * 65535), e.varint(0), e.varint(i),
                        e.svarint(0), e.varint(0);
                }
            }));
    // Under a 2 GiB address-space limit, unless a sanitizer runtime needs more than that to start.
#ifdef GPULEAK_TEST_SANITIZED
    check("sparse-ids", t.bytes(), 0);
#else
    std::string path = dir_ + "/sparse-ids";
    write_file(path, t.bytes());
    std::string out;
    int rc = e2e::shell("prlimit --as=2147483648 -- '" + e2e::Paths::report() +
                            "' --format json '" + path + "' >/dev/null",
                        &out);
    EXPECT_EQ(rc, 0) << out;
#endif
}

// A real trace cut at many points and with bytes flipped: each is an error or a readable prefix.
TEST_F(AnalyzerInput, RealTraceCutAndFlippedAnywhere) {
    e2e::RunOptions options;
    options.env["GPULEAK_COMPRESS"] = "0";
    e2e::RunResult r = e2e::run({e2e::Paths::app("path_direct")}, options);
    ASSERT_EQ(r.traces.size(), 1u) << r.output;
    std::string trace = read_file(r.traces[0]);
    ASSERT_GT(trace.size(), 200u);
    size_t step = trace.size() / 24 + 1;
    for (size_t cut = 1; cut < trace.size(); cut += step)
        check("cut" + std::to_string(cut), trace.substr(0, cut));
    for (size_t at = 3; at < trace.size(); at += step) {
        std::string flipped = trace;
        flipped[at] ^= 0x5a;
        check("flip" + std::to_string(at), flipped);
    }
}

} // namespace
} // namespace gpuleak::robustness
