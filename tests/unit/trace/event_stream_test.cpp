// The event stream (pass 2, and pass 1 with a sink) against a reference merge written here: every
// block of the trace decoded on its own, its records sorted by (time, thread, order in thread).
// Both ways the stream runs (the merge on a thread of its own, and GPULEAK_REPORT_THREADS=1) must
// deliver exactly that, with every field of every tag, across many chunks, ties, recycled thread
// slots, definitions that overflow a chunk, a malformed block and one that does not load.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpuleak/format/trace_builder.h"
#include "gpuleak/format/writer.h"
#include "trace/event_stream.h"
#include "trace/loaded_trace.h"

namespace gpuleak::analyzer {
namespace {

using format::Api;
using format::BlockHeader;
using format::MemKind;
using format::Record;
using format::Space;
using format::Tag;
using format::ThreadRef;
using format::TraceBuilder;

// Every field the tag defines, so that a field lost or swapped in packing shows.
std::string describe(const Record& r) {
    std::string s = std::to_string(static_cast<int>(r.tag));
    if (is_timed(r.tag)) s += " ts=" + std::to_string(r.ts);
    auto add = [&s](const char* name, auto v) {
        s += std::string(" ") + name + "=" + std::to_string(v);
    };
    switch (r.tag) {
    case Tag::Alloc:
        add("api", static_cast<int>(r.api));
        add("kind", static_cast<int>(r.kind));
        add("device", r.device);
        add("address", r.address);
        add("size", r.size);
        add("stack", r.stack);
        add("py", r.py_stack);
        break;
    case Tag::Free:
        add("api", static_cast<int>(r.api));
        add("space", static_cast<int>(r.space));
        add("address", r.address);
        add("result", r.result);
        break;
    case Tag::AllocFailed:
        add("api", static_cast<int>(r.api));
        add("kind", static_cast<int>(r.kind));
        add("device", r.device);
        add("size", r.size);
        add("result", r.result);
        add("stack", r.stack);
        add("py", r.py_stack);
        add("free", r.free_bytes);
        add("total", r.total_bytes);
        break;
    case Tag::VmmRetain:
        add("handle", r.handle);
        add("address", r.address);
        break;
    case Tag::VmmRelease:
        add("handle", r.handle);
        break;
    case Tag::VmmMap:
        add("address", r.address);
        add("size", r.size);
        add("offset", r.offset);
        add("handle", r.handle);
        break;
    case Tag::VmmUnmap:
        add("address", r.address);
        add("size", r.size);
        break;
    case Tag::Marker:
    case Tag::Thread:
        s += " text=" + r.text;
        break;
    case Tag::StackNode:
        add("id", r.id);
        add("parent", r.parent);
        add("ip", r.ip);
        break;
    case Tag::PyStackNode:
        add("id", r.id);
        add("parent", r.parent);
        add("code", r.ip);
        add("offset", r.line_or_offset);
        add("entry", static_cast<int>(r.is_entry));
        break;
    case Tag::PyCode:
        add("id", r.id);
        s += " file=" + r.text + " name=" + r.text2;
        add("line", r.line_or_offset);
        break;
    default:
        break;
    }
    return s;
}

// What a reader sees, in its order: events and, with a sink, definitions and block errors.
struct Seen {
    std::vector<std::string> events; // "thread lane record"
    // Per thread, its events, definitions and block errors, in the order the reader met them.
    std::map<uint32_t, std::vector<std::string>> by_thread;
    size_t untimed = 0, errors = 0;
    std::vector<std::string> warnings; // added to the trace by the stream
    bool complete = true;
};

std::string event_line(uint32_t thread, uint32_t lane, const Record& r) {
    return std::to_string(thread) + " " + std::to_string(lane) + " " + describe(r);
}

// The reference: each thread's blocks in sequence order, decoded one by one; lanes counted from
// the thread's Thread records; events sorted by (time, thread, order within the thread).
Seen reference(LoadedTrace& t) {
    std::map<uint32_t, std::vector<const format::BlockRef*>> by_thread;
    for (const auto& b : t.file.blocks())
        if (b.thread_index != format::kGlobalThreadIndex) by_thread[b.thread_index].push_back(&b);
    std::vector<std::tuple<uint64_t, uint32_t, size_t, std::string>> timed;
    Seen seen;
    for (auto& [thread, blocks] : by_thread) {
        std::sort(blocks.begin(), blocks.end(),
                  [](auto* a, auto* b) { return a->sequence < b->sequence; });
        uint32_t lane = thread, announced = 0;
        size_t order = 0;
        for (const format::BlockRef* b : blocks) {
            std::vector<uint8_t> payload;
            std::vector<std::string>& log = seen.by_thread[thread];
            if (!t.file.load(*b, payload)) {
                log.push_back("unloadable " + std::to_string(b->first_ts));
                ++seen.errors;
                continue;
            }
            auto cursor = format::RecordCursor::block(t.file.version(), payload.data(),
                                                      payload.size(), b->first_ts);
            Record r;
            while (cursor.next(r)) {
                if (is_timed(r.tag)) {
                    timed.emplace_back(r.ts, thread, order++, event_line(thread, lane, r));
                    log.push_back(std::get<3>(timed.back()));
                    continue;
                }
                if (r.tag == Tag::Thread && ++announced > 1) lane = (announced - 1) << 16 | thread;
                log.push_back(describe(r));
                ++seen.untimed;
            }
            if (!cursor.error().empty()) {
                log.push_back("malformed " + std::to_string(b->first_ts));
                ++seen.errors;
            }
        }
    }
    std::sort(timed.begin(), timed.end());
    for (auto& e : timed)
        seen.events.push_back(std::get<3>(e));
    return seen;
}

class RecordingSink : public RecordSink {
public:
    explicit RecordingSink(Seen& seen) : seen_(seen) {}
    void untimed(const format::BlockRef& block, const Record& r) override {
        seen_.by_thread[block.thread_index].push_back(describe(r));
        ++seen_.untimed;
    }
    void block_error(const format::BlockRef& block, bool malformed, const std::string&) override {
        seen_.by_thread[block.thread_index].push_back((malformed ? "malformed " : "unloadable ") +
                                                      std::to_string(block.first_ts));
        ++seen_.errors;
    }

private:
    Seen& seen_;
};

Seen stream(LoadedTrace& t, bool with_sink) {
    Seen seen;
    RecordingSink sink(seen);
    size_t warnings = t.warnings.size();
    {
        EventStream s(t, with_sink ? &sink : nullptr);
        while (const Event* e = s.next()) {
            seen.events.push_back(event_line(e->thread, e->lane, *e->record));
            if (with_sink) seen.by_thread[e->thread].push_back(seen.events.back());
        }
        seen.complete = s.complete();
    }
    seen.warnings.assign(t.warnings.begin() + static_cast<long>(warnings), t.warnings.end());
    return seen;
}

// Several threads taking turns at random, with ties in time, every event tag, values at the edges
// of their types, a slot handed to a second and third thread, and a stack of 5000 new frames
// (more definitions between two events than a chunk holds).
std::vector<uint8_t> mixed_trace() {
    TraceBuilder b({.compress = false, .block_bytes = 4096});
    b.process({});
    std::vector<ThreadRef> threads = {b.thread(10, "main"), b.thread(11, "loader"),
                                      b.thread(12, "worker")};
    std::mt19937_64 random(20261204);
    uint64_t ts = 1000;
    uint64_t code = b.py_code(threads[0], "train.py", "step", 7);
    uint64_t py = b.py_stack(threads[0], {{code, 12, true}, {code, -4, false}});
    uint64_t stack = b.stack(threads[0], {0x401000, 0x400100});
    for (int i = 0; i < 30000; ++i) {
        ThreadRef t = threads[random() % threads.size()];
        if (random() % 3 != 0) ts += random() % 50; // else the same time as the thread before
        uint64_t address = 0x7f0000000000 + (random() % 4096) * 256;
        switch (random() % 12) {
        case 0:
            b.free(t, ts, address, {.api = Api::cudaFree, .space = Space::Host, .result = -3});
            break;
        case 1:
            b.alloc_failed(t, ts, 1ull << 40, stack,
                           {.device = 3,
                            .result = 2,
                            .py_stack = py,
                            .free_bytes = 5,
                            .total_bytes = ~0ull - 1});
            break;
        case 2:
            b.vmm_create(t, ts, address, 2 << 20, stack, 1);
            break;
        case 3:
            b.vmm_map(t, ts, address, 4096, 8192, ~0ull);
            break;
        case 4:
            b.vmm_unmap(t, ts, address, 4096);
            break;
        case 5:
            b.vmm_retain(t, ts, address, address + 64);
            break;
        case 6:
            b.vmm_release(t, ts, address);
            break;
        case 7:
            b.marker(t, ts, "iteration " + std::to_string(i));
            break;
        case 8: // a device that a packed entry cannot hold
            b.alloc(t, ts, address, 512, 0, {.device = int64_t{1} << 40});
            break;
        case 9:
            b.alloc(t, ts, ~0ull, ~0ull, b.stack(t, {0x500000 + random() % 64, 0x400100}),
                    {.api = Api::cuMemAllocManaged,
                     .kind = MemKind::Managed,
                     .device = -1,
                     .py_stack = py});
            break;
        default:
            b.alloc(t, ts, address, 1 + random() % 100000, stack);
            b.free(t, ts, address);
            break;
        }
        if (i == 10000) { // the worker exits; its slot goes to a new thread, twice
            b.reuse(threads[2], 13, "worker 2");
            b.alloc(threads[2], ts, 0x1000, 1);
            b.reuse(threads[2], 14, "worker 3");
        }
        if (i == 20000) {
            std::vector<uint64_t> deep;
            for (uint64_t f = 0; f < 5000; ++f)
                deep.push_back(0x900000 + f);
            b.alloc(threads[1], ts, 0x2000, 1, b.stack(threads[1], deep));
        }
    }
    b.end(ts + 1);
    return b.bytes();
}

// Damages two blocks in place, their checksums made right again: thread 2's fourth block gets a
// time column too short for its records (malformed), thread 3's second block says it is
// compressed (it does not load).
std::vector<uint8_t> damaged(std::vector<uint8_t> bytes) {
    format::TraceFile f;
    EXPECT_TRUE(f.open_memory(bytes)) << f.error();
    f.index_blocks();
    bool malformed = false, unloadable = false;
    for (const auto& b : f.blocks()) {
        uint8_t* payload = bytes.data() + b.offset;
        BlockHeader h;
        std::memcpy(&h, payload - sizeof h, sizeof h);
        if (b.thread_index == 2 && b.sequence == 3) {
            payload[b.stored_size - format::kTimeTrailerBytes] = 1;
            malformed = true;
        } else if (b.thread_index == 3 && b.sequence == 1) {
            h.flags = format::kBlockZstd; // records are no zstd frame
            unloadable = true;
        } else {
            continue;
        }
        // A block whose checksum fails ends the readable trace: these are read, and fail later.
        h.checksum = format::block_checksum(h, payload, b.stored_size);
        std::memcpy(payload - sizeof h, &h, sizeof h);
    }
    EXPECT_TRUE(malformed && unloadable);
    return bytes;
}

// The stream's two ways of running, chosen as the analyzer chooses them.
class EventStreamModes : public ::testing::TestWithParam<bool> {
protected:
    void SetUp() override {
        if (GetParam()) {
            setenv("GPULEAK_REPORT_THREADS", "1", 1);
            ASSERT_FALSE(EventStream::merges_in_background());
        } else {
            unsetenv("GPULEAK_REPORT_THREADS");
            if (!EventStream::merges_in_background())
                GTEST_SKIP() << "one CPU to run on: the stream merges in its reader's thread";
        }
    }
    void TearDown() override { unsetenv("GPULEAK_REPORT_THREADS"); }

    static std::unique_ptr<LoadedTrace> load(std::vector<uint8_t> bytes) {
        auto t = std::make_unique<LoadedTrace>();
        std::string error;
        EXPECT_TRUE(load_trace("mixed", std::move(bytes), *t, error)) << error;
        return t;
    }
};

TEST_P(EventStreamModes, DeliversTheReferenceMergeField_by_field) {
    auto trace = load(mixed_trace());
    LoadedTrace& t = *trace;
    Seen want = reference(t);
    ASSERT_GT(want.events.size(), 10 * EventChunk::kEntries);
    ASSERT_EQ(want.errors, 0u);

    Seen got = stream(t, false);
    EXPECT_TRUE(got.complete);
    EXPECT_TRUE(got.warnings.empty());
    ASSERT_EQ(got.events.size(), want.events.size());
    for (size_t i = 0; i < want.events.size(); ++i)
        ASSERT_EQ(got.events[i], want.events[i]) << "event " << i;

    // The lanes of the recycled slot: the first thread's, then one per later thread.
    size_t lanes_of_slot_3 = 0;
    std::map<std::string, int> lanes;
    for (const auto& e : got.events)
        if (e.rfind("3 ", 0) == 0) lanes[e.substr(0, e.find(' ', 2))]++;
    lanes_of_slot_3 = lanes.size();
    EXPECT_EQ(lanes_of_slot_3, 3u);

    Seen with_sink = stream(t, true);
    EXPECT_EQ(with_sink.events, want.events);
    EXPECT_EQ(with_sink.by_thread, want.by_thread);
    EXPECT_GT(with_sink.untimed, 5000u);
}

TEST_P(EventStreamModes, DamagedBlocksReachTheSinkOrTheWarningsInThreadOrder) {
    auto trace = load(damaged(mixed_trace()));
    LoadedTrace& t = *trace;
    Seen want = reference(t);
    ASSERT_EQ(want.errors, 2u);

    Seen got = stream(t, false);
    EXPECT_FALSE(got.complete);
    EXPECT_EQ(got.events, want.events); // the other blocks, every event of them
    ASSERT_EQ(got.warnings.size(), 2u);
    std::sort(got.warnings.begin(), got.warnings.end());
    EXPECT_EQ(got.warnings[0].rfind("cannot decompress block at offset ", 0), 0u)
        << got.warnings[0];
    EXPECT_EQ(got.warnings[1].rfind("malformed record in thread 2: ", 0), 0u) << got.warnings[1];

    Seen with_sink = stream(t, true);
    EXPECT_EQ(with_sink.events, want.events);
    EXPECT_EQ(with_sink.by_thread, want.by_thread);
    EXPECT_EQ(with_sink.errors, 2u);
    EXPECT_TRUE(with_sink.warnings.empty()); // the sink had them
}

// A reader that stops early (an exception in the analysis, a report cut short) ends the merge.
TEST_P(EventStreamModes, ReaderThatStopsEarlyEndsTheMerge) {
    auto trace = load(mixed_trace());
    LoadedTrace& t = *trace;
    for (size_t stop_after :
         {size_t{0}, size_t{1}, EventChunk::kEntries, 5 * EventChunk::kEntries}) {
        EventStream s(t);
        for (size_t i = 0; i < stop_after; ++i)
            ASSERT_NE(s.next(), nullptr);
    } // joins the merging thread; a hang here fails the test on ctest's timeout
    Seen whole = stream(t, false);
    EXPECT_EQ(whole.events, reference(t).events); // a new stream starts over
}

// Pass 1 (load_trace reads the definitions through the stream) gives the same trace either way.
TEST_P(EventStreamModes, LoadsTheSameTraceEitherWay) {
    auto trace = load(damaged(mixed_trace()));
    LoadedTrace& t = *trace;
    std::vector<std::string> events = reference(t).events;
    auto markers = std::count_if(events.begin(), events.end(), [](const std::string& e) {
        return e.find(" 12 ts=") != std::string::npos;
    });
    EXPECT_EQ(t.marker_count, static_cast<uint64_t>(markers));
    setenv("GPULEAK_REPORT_THREADS", GetParam() ? "0" : "1", 1); // the other way
    auto other_trace = load(damaged(mixed_trace()));
    LoadedTrace& other = *other_trace;
    EXPECT_EQ(t.warnings, other.warnings);
    EXPECT_EQ(t.native_nodes.size(), other.native_nodes.size());
    EXPECT_EQ(t.marker_count, other.marker_count);
    ASSERT_EQ(t.markers.size(), other.markers.size());
    for (size_t i = 0; i < t.markers.size(); ++i) {
        EXPECT_EQ(t.markers[i].name, other.markers[i].name);
        EXPECT_EQ(t.markers[i].ts.take(), other.markers[i].ts.take());
    }
    EXPECT_GT(t.native_nodes.size(), 5000u);
}

// An event line without the fields of an allocation that pass 1 steps over (device, address,
// size: RecordCursor::times_and_stacks_only).
std::string pass_one_fields(const std::string& line) {
    std::istringstream in(line);
    std::string out, field;
    while (in >> field)
        if (field.rfind("device=", 0) != 0 && field.rfind("address=", 0) != 0 &&
            field.rfind("size=", 0) != 0)
            out += (out.empty() ? "" : " ") + field;
    return out;
}

// Pass 1 reads only allocations (their times, apis, kinds and stacks) and markers: the stream
// delivers those, in the reference's order, with every definition and block error as before, and
// of the other timed records each lane's first and last time and the latest of all, in the
// damaged blocks' readable part too.
TEST_P(EventStreamModes, PassOneGetsAllocationsAndMarkersAndTheTimesOfTheRest) {
    for (bool damage : {false, true}) {
        auto trace = load(damage ? damaged(mixed_trace()) : mixed_trace());
        LoadedTrace& t = *trace;
        Seen all = reference(t);
        std::vector<std::string> wanted;
        std::map<uint32_t, std::pair<uint64_t, uint64_t>> passed; // lane -> first, last
        uint64_t passed_last = 0;
        for (const std::string& e : all.events) {
            // "thread lane tag ts=..."
            std::istringstream in(e);
            uint32_t thread, lane;
            int tag;
            std::string ts_field;
            in >> thread >> lane >> tag >> ts_field;
            if (tag == static_cast<int>(Tag::Alloc) || tag == static_cast<int>(Tag::Marker)) {
                wanted.push_back(pass_one_fields(e));
                continue;
            }
            uint64_t ts = std::stoull(ts_field.substr(3));
            auto [at, fresh] = passed.try_emplace(lane, ts, ts);
            if (!fresh) at->second.second = ts;
            passed_last = std::max(passed_last, ts);
        }
        ASSERT_GT(passed.size(), 3u); // every thread, and the later lanes of the recycled slot
        ASSERT_GT(wanted.size(), 1000u);
        ASSERT_LT(wanted.size(), all.events.size() / 2);

        Seen got;
        RecordingSink sink(got);
        size_t warnings = t.warnings.size();
        PassedOver over;
        {
            EventStream s(t, &sink, Timed::AllocationsAndMarkers);
            while (const Event* e = s.next())
                got.events.push_back(pass_one_fields(event_line(e->thread, e->lane, *e->record)));
            over = s.passed_over();
        }
        EXPECT_EQ(got.events, wanted);
        EXPECT_EQ(t.warnings.size(), warnings); // the sink had the block errors
        EXPECT_EQ(got.errors, all.errors);
        EXPECT_EQ(got.untimed, all.untimed);
        std::map<uint32_t, std::pair<uint64_t, uint64_t>> got_passed;
        for (const PassedOver::Lane& l : over.lanes)
            EXPECT_TRUE(got_passed.try_emplace(l.lane, l.first_ts, l.last_ts).second)
                << "lane " << l.lane << " twice";
        EXPECT_EQ(got_passed, passed);
        EXPECT_EQ(over.last_ts, passed_last);

        // Pass 2's stream passes nothing over.
        EventStream every(t);
        while (every.next()) {
        }
        EXPECT_TRUE(every.passed_over().lanes.empty());
    }
}

// A process held to one CPU (taskset, a container's cpuset) merges in its reader's thread: a
// second thread there would only take turns with the reader.
TEST(EventStream, MergesInTheReadersThreadOnOneCpu) {
    unsetenv("GPULEAK_REPORT_THREADS");
    cpu_set_t all;
    ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
    if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "one CPU to run on already";
    EXPECT_TRUE(EventStream::merges_in_background());
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &all)) {
            CPU_SET(cpu, &one);
            break;
        }
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    bool background = EventStream::merges_in_background();
    ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
    EXPECT_FALSE(background);
}

INSTANTIATE_TEST_SUITE_P(Ways, EventStreamModes, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                             return info.param ? "InReadersThread" : "InBackground";
                         });

} // namespace
} // namespace gpuleak::analyzer
