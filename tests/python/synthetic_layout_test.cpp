// The 3.14 paths cannot run against a real interpreter here, so they run against hand-built
// memory: a _Py_DebugOffsets blob in the 3.14 schema and frames in the 3.14 layout (tagged
// f_executable, INTERPRETER/CSTACK shim owners, free-threaded thread-local bytecode).
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <vector>

#include "frame_walk.h"
#include "layout.h"
#include "version_tables.h"

namespace py = gpuleak::python;

namespace {

constexpr uint32_t k314 = 0x030e00f0;

// Positions inside the 3.14 _Py_DebugOffsets (Include/internal/pycore_debug_offsets.h).
struct DebugOffsets314 {
    alignas(8) unsigned char bytes[760] = {};

    void put(uint32_t pos, uint64_t value) { std::memcpy(bytes + pos, &value, 8); }

    explicit DebugOffsets314(bool free_threaded) {
        std::memcpy(bytes, "xdebugpy", 8);
        put(8, k314);
        put(16, free_threaded ? 1 : 0);
        // Free-threaded object headers are 16 bytes longer; 3.14t code objects add co_tlbc.
        uint64_t obj = free_threaded ? 16 : 0;
        put(48, 12000);                                // interpreter_state.size
        put(56, 16);                                   //   .id
        put(176, 400);                                 // thread_state.size
        put(200, 16);                                  //   .interp
        put(208, 72);                                  //   .current_frame
        put(248, 96);                                  // interpreter_frame.size
        put(256, 8);                                   //   .previous
        put(264, 0);                                   //   .executable
        put(272, 56);                                  //   .instr_ptr
        put(288, 74);                                  //   .owner
        put(304, free_threaded ? 80 : 0);              //   .tlbc_index
        put(312, 240);                                 // code_object.size
        put(320, 112 + obj);                           //   .filename
        put(336, 128 + obj);                           //   .qualname
        put(344, 136 + obj);                           //   .linetable
        put(352, 68 + obj);                            //   .firstlineno
        put(384, 208 + obj + (free_threaded ? 8 : 0)); //   .co_code_adaptive
        put(392, free_threaded ? 208 + obj : 0);       //   .co_tlbc
        put(400, 16 + obj);                            // pyobject.size
        put(408, 8 + obj);                             //   .ob_type
        put(416, 400);                                 // type_object.size
        put(424, 24 + obj);                            //   .tp_name
        put(592, 48 + obj);                            // bytes_object.size
        put(600, 16 + obj);                            //   .ob_size
        put(608, 32 + obj);                            //   .ob_sval
        put(616, 80);                                  // unicode_object.size
        put(624, 32 + obj);                            //   .state
        put(632, 16 + obj);                            //   .length
        put(640, 40 + obj);                            //   .asciiobject_size
    }
};

// Objects and frames laid out as the given Layout says, in stable memory.
class Heap {
public:
    explicit Heap(const py::Layout& l) : l_(l) {}

    uintptr_t block(size_t bytes = 512) {
        blocks_.emplace_back(bytes / 8 + 1, 0);
        return reinterpret_cast<uintptr_t>(blocks_.back().data());
    }
    template <typename T> void set(uintptr_t base, int64_t offset, T value) {
        std::memcpy(reinterpret_cast<void*>(base + static_cast<uintptr_t>(offset)), &value,
                    sizeof value);
    }
    uintptr_t code(uintptr_t type, int32_t units, int32_t firsttraceable) {
        uintptr_t c = block(1024);
        set(c, l_.ob_type, type);
        set<int64_t>(c, l_.var_size, units);
        set(c, l_.co_firsttraceable, firsttraceable);
        return c;
    }
    // Frames are pushed outermost first; each links to the previous one pushed.
    uintptr_t frame(uint8_t owner, uintptr_t executable, uintptr_t instr) {
        uintptr_t f = block(128);
        set(f, l_.f_back, top_);
        set(f, l_.f_code, executable);
        set(f, l_.f_instr, instr);
        set(f, l_.f_owner, owner);
        top_ = f;
        return f;
    }
    uintptr_t top() const { return top_; }

private:
    const py::Layout& l_;
    std::deque<std::vector<uint64_t>> blocks_;
    uintptr_t top_ = 0;
};

} // namespace

TEST(DebugOffsets314, DefaultBuild) {
    DebugOffsets314 blob(false);
    py::Layout l;
    const char* why = nullptr;
    ASSERT_TRUE(py::debug_offsets_layout(blob.bytes, k314, l, &why)) << why;
    EXPECT_STREQ(l.source, "debug_offsets");
    EXPECT_EQ(l.ts_top, 72u);
    EXPECT_EQ(l.f_owner, 74);
    EXPECT_EQ(l.co_code_adaptive, 208u);
    EXPECT_EQ(l.co_firsttraceable, 192);
    EXPECT_EQ(l.code_mask, ~uintptr_t{3});
    EXPECT_EQ(l.owner_shim_min, 3);
    EXPECT_EQ(l.f_tlbc_index, py::kAbsent);
    EXPECT_EQ(l.str_compact_size, 56u);
    EXPECT_EQ(l.type_basicsize, 32u);
}

TEST(DebugOffsets314, Rejections) {
    py::Layout l;
    const char* why = nullptr;
    DebugOffsets314 cookie(false);
    cookie.bytes[0] = 'X';
    EXPECT_FALSE(py::debug_offsets_layout(cookie.bytes, k314, l, &why));
    DebugOffsets314 version(false);
    EXPECT_FALSE(py::debug_offsets_layout(version.bytes, 0x030e01f0, l, &why));
    DebugOffsets314 outside(false);
    outside.put(352, 400); // firstlineno beyond code_object.size
    EXPECT_FALSE(py::debug_offsets_layout(outside.bytes, k314, l, &why));
    DebugOffsets314 no_tlbc(true);
    no_tlbc.put(392, 0);
    EXPECT_FALSE(py::debug_offsets_layout(no_tlbc.bytes, k314, l, &why));
    EXPECT_FALSE(py::debug_offsets_layout(DebugOffsets314(false).bytes, 0x030f00f0, l, &why));
}

TEST(Walk314, TaggedExecutablesShimsAndIncompleteFrames) {
    DebugOffsets314 blob(false);
    py::Layout l;
    const char* why = nullptr;
    ASSERT_TRUE(py::debug_offsets_layout(blob.bytes, k314, l, &why)) << why;
    Heap heap(l);
    uintptr_t code_type = heap.block();
    uintptr_t none = heap.block();
    uintptr_t a = heap.code(code_type, 50, 2);
    uintptr_t b = heap.code(code_type, 50, 2);
    uintptr_t c = heap.code(code_type, 50, 2);
    auto at = [&](uintptr_t code, int unit) { return code + l.co_code_adaptive + 2 * unit; };
    // Outermost first: INTERPRETER shim, B (FRAME_OBJECT), CSTACK shim, A still in its prologue,
    // generator C at its start, INTERPRETER shim, B, A.
    heap.frame(3, none | 1, 0);
    heap.frame(2, b | 1, at(b, 10));
    heap.frame(4, 0, 0);
    heap.frame(0, a, at(a, 1));
    heap.frame(1, c | 1, at(c, 0));
    heap.frame(3, none | 1, 0);
    heap.frame(0, b | 1, at(b, 3));
    heap.frame(0, a | 1, at(a, 5));
    uintptr_t tstate = heap.block();
    heap.set(tstate, l.ts_top, heap.top());

    py::PyFrame out[8];
    size_t n = py::walk_frames(l, code_type, tstate, out, 8);
    ASSERT_EQ(n, 4u);
    EXPECT_EQ(out[0].code_id, a);
    EXPECT_EQ(out[0].byte_offset, 10);
    EXPECT_FALSE(out[0].is_entry);
    EXPECT_EQ(out[1].code_id, b);
    EXPECT_EQ(out[1].byte_offset, 6);
    EXPECT_TRUE(out[1].is_entry);
    EXPECT_EQ(out[2].code_id, c); // a generator is never "incomplete"
    EXPECT_EQ(out[2].byte_offset, 0);
    EXPECT_TRUE(out[2].is_entry); // the prologue frame A was hidden; C closes that eval call
    EXPECT_EQ(out[3].code_id, b);
    EXPECT_EQ(out[3].byte_offset, 20);
    EXPECT_TRUE(out[3].is_entry);

    // A cap keeps the innermost frames.
    EXPECT_EQ(py::walk_frames(l, code_type, tstate, out, 2), 2u);
    EXPECT_EQ(out[0].code_id, a);
}

TEST(Walk314, FreeThreadedUsesThreadLocalBytecode) {
    DebugOffsets314 blob(true);
    py::Layout l;
    const char* why = nullptr;
    ASSERT_TRUE(py::debug_offsets_layout(blob.bytes, k314, l, &why)) << why;
    EXPECT_EQ(l.ob_type, 24u);
    EXPECT_EQ(l.f_tlbc_index, 80);
    EXPECT_EQ(l.str_state_shift, 8);
    EXPECT_EQ(l.co_firsttraceable, 208 + 16 - 16);
    Heap heap(l);
    uintptr_t code_type = heap.block();
    uintptr_t none = heap.block();
    uintptr_t a = heap.code(code_type, 40, 0);
    uintptr_t copy = heap.block(256);
    uintptr_t tlbc = heap.block(64);
    heap.set<int64_t>(tlbc, 0, 2);
    heap.set(tlbc, 8, a + l.co_code_adaptive);
    heap.set(tlbc, 16, copy);
    heap.set(a, l.co_tlbc, tlbc);
    heap.frame(3, none | 1, 0);
    uintptr_t f = heap.frame(0, a | 1, copy + 14);
    heap.set<int32_t>(f, l.f_tlbc_index, 1);
    uintptr_t tstate = heap.block();
    heap.set(tstate, l.ts_top, heap.top());

    py::PyFrame out[4];
    ASSERT_EQ(py::walk_frames(l, code_type, tstate, out, 4), 1u);
    EXPECT_EQ(out[0].byte_offset, 14);
    EXPECT_TRUE(out[0].is_entry);

    heap.set<int32_t>(f, l.f_tlbc_index, 5); // out of range: position unknown, frame kept
    ASSERT_EQ(py::walk_frames(l, code_type, tstate, out, 4), 1u);
    EXPECT_EQ(out[0].byte_offset, -1);
}

TEST(Walk, CyclicChainStops) {
    py::Layout l;
    ASSERT_TRUE(py::table_layout(0x030c01f0, l));
    Heap heap(l);
    uintptr_t code_type = heap.block();
    uintptr_t a = heap.code(code_type, 10, 0);
    uintptr_t f1 = heap.frame(0, a, a + l.co_code_adaptive);
    uintptr_t f2 = heap.frame(0, a, a + l.co_code_adaptive + 2);
    heap.set(f1, l.f_back, f2); // f2 -> f1 -> f2 ...
    uintptr_t cframe = heap.block();
    heap.set(cframe, l.cframe_current, f2);
    uintptr_t tstate = heap.block();
    heap.set(tstate, l.ts_top, cframe);
    std::vector<py::PyFrame> out(py::kMaxFrames);
    EXPECT_EQ(py::walk_frames(l, code_type, tstate, out.data(), out.size()), py::kMaxFrames);

    // A cycle of shims yields no frame at all: the visit limit ends it.
    uintptr_t s1 = heap.frame(3, 0, 0);
    uintptr_t s2 = heap.frame(3, 0, 0);
    heap.set(s1, l.f_back, s2);
    heap.set(cframe, l.cframe_current, s2);
    EXPECT_EQ(py::walk_frames(l, code_type, tstate, out.data(), out.size()), 0u);
}

// 3.11 and 3.12 walk through copies of the walk compiled with their table's offsets as constants;
// on the same frames they must give what the walk reading the offsets from a Layout gives.
TEST(Walk, TableWalksMatchTheWalkOverAnyLayout) {
    for (uint32_t version : {0x030b07f0u, 0x030c01f0u}) {
        SCOPED_TRACE(version);
        py::Layout l;
        ASSERT_TRUE(py::table_layout(version, l));
        ASSERT_NE(l.table_minor, 0);
        py::Layout any = l;
        any.table_minor = 0; // the same offsets, read at run time
        Heap heap(l);
        uintptr_t code_type = heap.block();
        uintptr_t a = heap.code(code_type, 50, 2);
        uintptr_t b = heap.code(code_type, 50, 0);
        auto at = [&](uintptr_t code, int unit) { return code + l.co_code_adaptive + 2 * unit; };
        // Outermost first: B, A in its prologue (hidden), B, a shim on 3.12, A, B, A.
        heap.frame(0, b, at(b, 7));
        heap.frame(0, a, at(a, 1));
        heap.frame(0, b, at(b, 3));
        heap.frame(l.owner_shim_min == 0xff ? 0 : l.owner_shim_min, 0, 0);
        uintptr_t entry = heap.frame(0, a, at(a, 9));
        if (l.f_is_entry != py::kAbsent) heap.set<uint8_t>(entry, l.f_is_entry, 1);
        heap.frame(0, b, at(b, 4));
        heap.frame(0, a, at(a, 12));
        uintptr_t cframe = heap.block();
        heap.set(cframe, l.cframe_current, heap.top());
        uintptr_t tstate = heap.block();
        heap.set(tstate, l.ts_top, cframe);

        py::PyFrame fixed[8], generic[8];
        size_t n = py::walk_frames(l, code_type, tstate, fixed, 8);
        ASSERT_EQ(py::walk_frames(any, code_type, tstate, generic, 8), n);
        ASSERT_GE(n, 5u);
        for (size_t i = 0; i < n; ++i) {
            EXPECT_EQ(fixed[i].code_id, generic[i].code_id) << i;
            EXPECT_EQ(fixed[i].byte_offset, generic[i].byte_offset) << i;
            EXPECT_EQ(fixed[i].is_entry, generic[i].is_entry) << i;
        }
        EXPECT_EQ(fixed[0].code_id, a);
        EXPECT_EQ(fixed[0].byte_offset, 24);
        EXPECT_EQ(fixed[n - 1].code_id, b);
        EXPECT_EQ(fixed[n - 1].byte_offset, 14);
        // Fewer frames than there are: the innermost, in both.
        EXPECT_EQ(py::walk_frames(l, code_type, tstate, fixed, 2), 2u);
        EXPECT_EQ(py::walk_frames(any, code_type, tstate, generic, 2), 2u);
        EXPECT_EQ(fixed[1].code_id, generic[1].code_id);
    }
}

// An instruction pointer within the code's bytes gives its offset; outside them, or in a code
// whose size reads as nonsense, the offset is unknown (-1) and the frame is kept. At -2 bytes
// (not started yet) the frame is still in its prologue: hidden, as CPython hides it.
TEST(Walk, OffsetsOutsideTheCodeAreUnknown) {
    py::Layout l;
    ASSERT_TRUE(py::table_layout(0x030b07f0, l));
    Heap heap(l);
    uintptr_t code_type = heap.block();
    uintptr_t a = heap.code(code_type, 10, 0); // 20 bytes of bytecode
    uintptr_t bad = heap.code(code_type, -5, 0);
    uintptr_t huge = heap.code(code_type, 0, 0);
    heap.set<int64_t>(huge, l.var_size, int64_t{1} << 62);
    struct Case {
        uintptr_t code;
        intptr_t delta;
        int32_t offset; // kHidden: not kept
    };
    constexpr int32_t kHidden = 1000;
    // Outermost first. Each frame runs another code than the frame inside it, so that each
    // frame's code is read anew.
    const Case cases[] = {{a, -2, kHidden}, {bad, 0, -1}, {a, 18, 18},   {huge, 4, -1}, {a, 20, -1},
                          {bad, 6, -1},     {a, -4, -1},  {huge, 0, -1}, {a, 0, 0}};
    std::vector<Case> kept; // innermost first, as the walk gives them
    for (const Case& c : cases) {
        heap.frame(0, c.code, c.code + l.co_code_adaptive + static_cast<uintptr_t>(c.delta));
        if (c.offset != kHidden) kept.insert(kept.begin(), c);
    }
    uintptr_t cframe = heap.block();
    heap.set(cframe, l.cframe_current, heap.top());
    uintptr_t tstate = heap.block();
    heap.set(tstate, l.ts_top, cframe);
    py::PyFrame out[std::size(cases)];
    ASSERT_EQ(py::walk_frames(l, code_type, tstate, out, std::size(cases)), kept.size());
    for (size_t i = 0; i < kept.size(); ++i) {
        EXPECT_EQ(out[i].code_id, kept[i].code) << i;
        EXPECT_EQ(out[i].byte_offset, kept[i].offset) << i;
    }
}
