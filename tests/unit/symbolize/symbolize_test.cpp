#include "loaded_module.h"
#include "symbolize/demangle.h"
#include "symbolize/symbolizer.h"
#include "symbolize_helper.h"

#include <dlfcn.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>

namespace gpuleak::analyzer {
namespace {

constexpr const char* kDirectName = "gpuleak_test::direct_caller(gpuleak_test::Capture*)";
constexpr const char* kHostName = "gpuleak_test::inline_host(gpuleak_test::Capture*, int*)";
constexpr const char* kInlinedName = "gpuleak_test::inlined_body(gpuleak_test::Capture*)";
constexpr const char* kSource = "symbolize_helper.cpp";

struct Helper {
    std::string path;
    ModuleInfo module;
    GpuleakHelperDirectFn direct = nullptr;
    GpuleakHelperInlinedFn inlined = nullptr;
    GpuleakHelperInlinedTwiceFn inlined_twice = nullptr;
    GpuleakHelperEntryFn direct_entry = nullptr;
    GpuleakHelperEntryFn tail_caller_entry = nullptr;
    GpuleakHelperCapturesFn one_call_twice = nullptr;
    GpuleakHelperTwoCapturesFn direct_and_indirect = nullptr;
    GpuleakHelperEntryFn internal_tail_caller_entry = nullptr;
    GpuleakHelperDirectFn lambda = nullptr;
};

// Loaded once per process and never closed: the addresses the tests resolve must stay mapped.
const Helper& helper(const std::string& path) {
    static std::map<std::string, Helper> loaded;
    auto [it, inserted] = loaded.try_emplace(path);
    Helper& h = it->second;
    if (!inserted) return h;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) throw std::runtime_error(dlerror());
    auto module = test::loaded_module(path);
    if (!module) throw std::runtime_error("dl_iterate_phdr does not list " + path);
    h.path = path;
    h.module = *module;
    h.direct = reinterpret_cast<GpuleakHelperDirectFn>(dlsym(handle, "gpuleak_helper_direct"));
    h.inlined = reinterpret_cast<GpuleakHelperInlinedFn>(dlsym(handle, "gpuleak_helper_inlined"));
    h.inlined_twice = reinterpret_cast<GpuleakHelperInlinedTwiceFn>(
        dlsym(handle, "gpuleak_helper_inlined_twice"));
    h.direct_entry =
        reinterpret_cast<GpuleakHelperEntryFn>(dlsym(handle, "gpuleak_helper_direct_entry"));
    h.tail_caller_entry =
        reinterpret_cast<GpuleakHelperEntryFn>(dlsym(handle, "gpuleak_helper_tail_caller_entry"));
    h.one_call_twice =
        reinterpret_cast<GpuleakHelperCapturesFn>(dlsym(handle, "gpuleak_helper_one_call_twice"));
    h.direct_and_indirect = reinterpret_cast<GpuleakHelperTwoCapturesFn>(
        dlsym(handle, "gpuleak_helper_direct_and_indirect"));
    h.internal_tail_caller_entry = reinterpret_cast<GpuleakHelperEntryFn>(
        dlsym(handle, "gpuleak_helper_internal_tail_caller_entry"));
    h.lambda = reinterpret_cast<GpuleakHelperDirectFn>(dlsym(handle, "gpuleak_helper_lambda"));
    if (!h.direct || !h.inlined || !h.inlined_twice || !h.direct_entry || !h.tail_caller_entry ||
        !h.one_call_twice || !h.direct_and_indirect || !h.internal_tail_caller_entry || !h.lambda)
        throw std::runtime_error("helper entry points missing in " + path);
    return h;
}

const Helper& with_debug() {
    return helper(SYMBOLIZE_HELPER);
}
const Helper& without_debug() {
    return helper(SYMBOLIZE_HELPER_NODEBUG);
}
const Helper& with_separate_debug() {
    return helper(SYMBOLIZE_HELPER_STRIPPED);
}

uint64_t address(void* p) {
    return reinterpret_cast<uint64_t>(p);
}
std::string basename(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}
bool mentions(const std::vector<std::string>& warnings, const std::string& a,
              const std::string& b) {
    for (const auto& w : warnings)
        if (w.find(a) != std::string::npos && w.find(b) != std::string::npos) return true;
    return false;
}

TEST(Symbolizer, NamesNoinlineFunctionAtItsExactLine) {
    const Helper& h = with_debug();
    gpuleak_test::Capture capture;
    h.direct(&capture);
    ASSERT_NE(capture.return_address, nullptr);

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const auto& frames = symbolizer.resolve(address(capture.return_address));

    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, kDirectName);
    EXPECT_EQ(basename(frames[0].file), kSource);
    EXPECT_EQ(frames[0].line, capture.line);
    EXPECT_EQ(frames[0].module, h.path);
    EXPECT_FALSE(frames[0].inlined);
    EXPECT_EQ(symbolizer.module_of(address(capture.return_address)), h.path);
    EXPECT_TRUE(symbolizer.warnings().empty()) << symbolizer.warnings().front();
}

TEST(Symbolizer, InlinedFrameComesFirstAndCallerGetsTheCallLine) {
    const Helper& h = with_debug();
    gpuleak_test::Capture inner;
    int call_line = 0;
    h.inlined(&inner, &call_line);

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const auto& frames = symbolizer.resolve(address(inner.return_address));

    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].function, kInlinedName);
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_EQ(basename(frames[0].file), kSource);
    EXPECT_EQ(frames[0].line, inner.line);
    EXPECT_EQ(frames[0].module, h.path);

    EXPECT_EQ(frames[1].function, kHostName);
    EXPECT_FALSE(frames[1].inlined);
    EXPECT_EQ(basename(frames[1].file), kSource);
    EXPECT_EQ(frames[1].line, call_line);
    EXPECT_EQ(frames[1].module, h.path);
    EXPECT_NE(inner.line, call_line);
}

// The loop finder tells a function's calls apart by where they stand: each call out of one inlined
// body is a different address, but in the caller they are one call, of the inlined function.
TEST(Symbolizer, CallsOutOfOneInlinedBodyStandAtOnePlaceInItsCaller) {
    const Helper& h = with_debug();
    gpuleak_test::Capture first, second, direct;
    h.inlined_twice(&first, &second);
    h.direct(&direct);
    ASSERT_NE(first.line, second.line);

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const std::vector<SourceFrame> a = symbolizer.resolve(address(first.return_address));
    const std::vector<SourceFrame> b = symbolizer.resolve(address(second.return_address));
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(a[0].line, first.line);
    EXPECT_EQ(b[0].line, second.line);
    EXPECT_GT(a[0].column, 0);
    EXPECT_GT(b[0].column, 0);
    EXPECT_GT(a[1].column, 0); // the inlined call's, on the caller's line
    // The innermost frames stand at their own addresses.
    EXPECT_EQ(a[0].inlined_entry, 0u);
    EXPECT_EQ(b[0].inlined_entry, 0u);
    // The caller's, at one address of the inlined body, before both calls out of it.
    EXPECT_NE(a[1].inlined_entry, 0u);
    EXPECT_EQ(a[1].inlined_entry, b[1].inlined_entry);
    EXPECT_LT(a[1].inlined_entry, address(first.return_address));
    EXPECT_EQ(symbolizer.module_of(a[1].inlined_entry), h.path);
    EXPECT_EQ(symbolizer.resolve(a[1].inlined_entry, false).back().function,
              "gpuleak_test::two_call_host(gpuleak_test::Capture*, gpuleak_test::Capture*)");
    // A frame that calls nothing inlined has none.
    const auto& plain = symbolizer.resolve(address(direct.return_address));
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(plain[0].inlined_entry, 0u);
}

// Sites are told apart by line and column where DWARF gives columns: the copies an optimizer
// makes of one call (unrolled or peeled iterations) are one site, two calls on a line are two.
TEST(Symbolizer, CopiesOfOneCallShareItsLineAndColumn) {
    const Helper& h = with_debug();
    gpuleak_test::Capture captures[2];
    h.one_call_twice(captures);
    ASSERT_NE(captures[0].return_address, captures[1].return_address);
    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const std::vector<SourceFrame> a = symbolizer.resolve(address(captures[0].return_address));
    const std::vector<SourceFrame> b = symbolizer.resolve(address(captures[1].return_address));
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0].line, captures[0].line);
    EXPECT_EQ(b[0].line, captures[0].line);
    EXPECT_GT(a[0].column, 0);
    EXPECT_EQ(a[0].column, b[0].column);
}

// A tail callee's DWARF name against the symbol-table name of the clone the stack shows.
TEST(Demangle, ACloneIsNamedAfterTheFunctionItWasMadeFrom) {
    EXPECT_EQ(without_clone_suffix("noise_2.constprop.0"), "noise_2");
    EXPECT_EQ(without_clone_suffix("step.part.0"), "step");
    EXPECT_EQ(without_clone_suffix("ns::f(int) [clone .isra.0]"), "ns::f(int)");
    EXPECT_EQ(without_clone_suffix("ns::f(int) [clone .cold]"), "ns::f(int)");
    EXPECT_EQ(without_clone_suffix("main"), "main");
    EXPECT_EQ(without_clone_suffix("ns::g(double, char const*)"), "ns::g(double, char const*)");
    EXPECT_EQ(without_clone_suffix("f<1.5>()"), "f<1.5>()");
    EXPECT_EQ(without_clone_suffix(""), "");
}

// What a function ends in with a jump is missing from the stacks under it: the loop finder must
// not take the callee's calls for the caller's call running again.
TEST(Symbolizer, NamesTheFunctionsAFunctionEndsInWithATailCall) {
    const Helper& h = with_debug();
    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    // An address inside each function, as a return address would be.
    const uint64_t tail_caller = address(h.tail_caller_entry()) + 1;
    const uint64_t direct = address(h.direct_entry()) + 1;
    EXPECT_EQ(
        symbolizer.tail_callees(tail_caller),
        std::vector<std::string>{"gpuleak_test::record_return_address(gpuleak_test::Capture*)"});
    // direct_caller's call to it is a call (sibling calls are off elsewhere in the helper).
    EXPECT_TRUE(symbolizer.tail_callees(direct).empty());
    // Without DWARF, nothing says so.
    const Helper& plain = without_debug();
    Symbolizer stripped;
    stripped.add_module(plain.module);
    EXPECT_TRUE(stripped.tail_callees(address(plain.tail_caller_entry()) + 1).empty());
}

// A function of internal linkage: DWARF names it without its parameters, its frames with them.
constexpr const char* kRecordHere =
    "gpuleak_test::(anonymous namespace)::record_here(gpuleak_test::Capture*)";

TEST(Symbolizer, NamesTheFunctionsAFunctionOfInternalLinkageEndsInWithATailCallAsItsFramesDo) {
    const Helper& h = with_debug();
    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    EXPECT_EQ(symbolizer.tail_callees(address(h.internal_tail_caller_entry()) + 1),
              std::vector<std::string>{kRecordHere});
}

// Where a call names the function it calls, a frame of another function right under it can only
// be there through a tail call of that function's.
TEST(Symbolizer, NamesTheFunctionADirectCallCallsAsItsFramesDo) {
    const Helper& h = with_debug();
    gpuleak_test::Capture direct, indirect;
    h.direct_and_indirect(&direct, &indirect);
    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    ASSERT_NE(direct.return_address, nullptr);
    EXPECT_EQ(symbolizer.direct_callee(address(direct.return_address)), kRecordHere);
    // The frames of the function called say the same.
    gpuleak_test::Capture inner;
    h.direct(&inner);
    EXPECT_EQ(symbolizer.direct_callee(address(inner.return_address)),
              "gpuleak_test::record_return_address(gpuleak_test::Capture*)");
    // Through a pointer, the call does not say.
    EXPECT_EQ(symbolizer.direct_callee(address(indirect.return_address)), "");
    // Nor does an address that is no call's return address, nor code without DWARF.
    EXPECT_EQ(symbolizer.direct_callee(address(h.direct_entry()) + 1), "");
    const Helper& plain = without_debug();
    plain.direct_and_indirect(&direct, &indirect);
    Symbolizer stripped;
    stripped.add_module(plain.module);
    EXPECT_EQ(stripped.direct_callee(address(direct.return_address)), "");
}

// An inlined lambda's closure type has no name in DWARF: it is named after the function it is in,
// as demangled symbols name it.
TEST(Symbolizer, NamesAnInlinedLambdaAfterItsFunction) {
    const Helper& h = with_debug();
    gpuleak_test::Capture capture;
    h.lambda(&capture);
    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const auto& frames = symbolizer.resolve(address(capture.return_address));
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_EQ(frames[0].function, "gpuleak_test::lambda_host::{lambda}::operator()");
    EXPECT_EQ(frames[0].line, capture.line);
    EXPECT_EQ(frames[1].function, "gpuleak_test::lambda_host(gpuleak_test::Capture*)");
}

TEST(Symbolizer, FunctionEntryIsLookedUpAsIsUnlessItIsAReturnAddress) {
    const Helper& h = with_debug();
    const uint64_t entry = address(h.direct_entry());

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    EXPECT_EQ(symbolizer.resolve(entry, false).back().function, kDirectName);
    // As a return address the byte before the entry is looked up, which is not in the function.
    EXPECT_NE(symbolizer.resolve(entry, true).back().function, kDirectName);
}

TEST(Symbolizer, CachesPerAddress) {
    const Helper& h = with_debug();
    gpuleak_test::Capture capture;
    h.direct(&capture);

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const uint64_t ip = address(capture.return_address);
    const auto& first = symbolizer.resolve(ip);
    EXPECT_EQ(&first, &symbolizer.resolve(ip));
    // The same instruction asked for as a plain address shares the entry.
    EXPECT_EQ(&first, &symbolizer.resolve(ip - 1, false));
}

TEST(Symbolizer, AddressInNoModuleGivesOneEmptyFrame) {
    Symbolizer symbolizer;
    symbolizer.add_module(with_debug().module);
    const auto& frames = symbolizer.resolve(0x1001);

    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].module, "");
    EXPECT_EQ(frames[0].function, "");
    EXPECT_EQ(frames[0].file, "");
    EXPECT_EQ(frames[0].line, 0);
    EXPECT_EQ(symbolizer.module_of(0x1000), "");
    EXPECT_TRUE(symbolizer.warnings().empty());
}

TEST(Symbolizer, MissingFileKeepsTheModuleAndWarnsOnce) {
    const std::string path = "/nonexistent/gpuleak/libmissing.so";
    Symbolizer symbolizer;
    symbolizer.add_module(ModuleInfo{path, 0x100000, {1, 2, 3, 4}, {{0, 0x2000}, {0x3000, 0x100}}});

    for (uint64_t ip : {0x100010ull, 0x101000ull, 0x103050ull}) {
        const auto& frames = symbolizer.resolve(ip);
        ASSERT_EQ(frames.size(), 1u);
        EXPECT_EQ(frames[0].module, path);
        EXPECT_EQ(frames[0].function, "");
        EXPECT_EQ(frames[0].line, 0);
    }
    EXPECT_EQ(symbolizer.module_of(0x102800), ""); // the gap between the segments
    ASSERT_EQ(symbolizer.warnings().size(), 1u);
    EXPECT_NE(symbolizer.warnings()[0].find(path), std::string::npos);
}

TEST(Symbolizer, BuildIdMismatchWarnsButStillSymbolizes) {
    const Helper& h = with_debug();
    ASSERT_FALSE(h.module.build_id.empty()) << "helper linked without --build-id";
    gpuleak_test::Capture capture;
    h.direct(&capture);

    ModuleInfo stale = h.module;
    stale.build_id[0] ^= 0xff;
    Symbolizer symbolizer;
    symbolizer.add_module(stale);
    EXPECT_EQ(symbolizer.resolve(address(capture.return_address)).front().function, kDirectName);

    ASSERT_EQ(symbolizer.warnings().size(), 1u);
    EXPECT_TRUE(mentions(symbolizer.warnings(), "build-id", h.path)) << symbolizer.warnings()[0];
}

TEST(Symbolizer, NoDebugInfoStillNamesFunctionsFromTheSymbolTable) {
    const Helper& h = without_debug();
    gpuleak_test::Capture capture;
    h.direct(&capture);
    gpuleak_test::Capture inner;
    int call_line = 0;
    h.inlined(&inner, &call_line);

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const auto& direct = symbolizer.resolve(address(capture.return_address));
    ASSERT_EQ(direct.size(), 1u);
    EXPECT_EQ(direct[0].function, kDirectName);
    EXPECT_EQ(direct[0].file, "");
    EXPECT_EQ(direct[0].line, 0);
    // Without DWARF nothing tells that code was inlined: the containing function is all there is.
    const auto& inlined = symbolizer.resolve(address(inner.return_address));
    ASSERT_EQ(inlined.size(), 1u);
    EXPECT_EQ(inlined[0].function, kHostName);

    ASSERT_EQ(symbolizer.warnings().size(), 1u);
    EXPECT_TRUE(mentions(symbolizer.warnings(), "no debug info", h.path));
}

TEST(Symbolizer, ReadsSeparateDebugInfo) {
    const Helper& h = with_separate_debug();
    gpuleak_test::Capture inner;
    int call_line = 0;
    h.inlined(&inner, &call_line);

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const auto& frames = symbolizer.resolve(address(inner.return_address));

    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].function, kInlinedName);
    EXPECT_EQ(basename(frames[0].file), kSource);
    EXPECT_EQ(frames[0].line, inner.line);
    EXPECT_EQ(frames[1].function, kHostName);
    EXPECT_EQ(frames[1].line, call_line);
    EXPECT_EQ(frames[1].module, h.path);
    EXPECT_TRUE(symbolizer.warnings().empty()) << symbolizer.warnings().front();
}

TEST(Symbolizer, LatestOverlappingRegistrationWins) {
    const Helper& h = with_debug();
    gpuleak_test::Capture capture;
    h.direct(&capture);
    const uint64_t ip = address(capture.return_address);

    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    const auto& frames = symbolizer.resolve(ip);
    ASSERT_EQ(frames.front().function, kDirectName);

    // Another library mapped over the same addresses after a dlclose.
    ModuleInfo other = h.module;
    other.path = "/nonexistent/gpuleak/libreplacement.so";
    other.build_id.clear();
    symbolizer.add_module(other);
    EXPECT_EQ(symbolizer.module_of(ip), other.path);
    EXPECT_EQ(&symbolizer.resolve(ip), &frames);
    EXPECT_EQ(frames.front().module, other.path);
    EXPECT_EQ(frames.front().function, "");

    symbolizer.add_module(h.module);
    EXPECT_EQ(symbolizer.module_of(ip), h.path);
    EXPECT_EQ(symbolizer.resolve(ip).front().function, kDirectName);
}

TEST(Symbolizer, RerecordingTheSameModuleChangesNothing) {
    const Helper& h = with_debug();
    gpuleak_test::Capture capture;
    h.direct(&capture);

    Symbolizer symbolizer;
    for (int i = 0; i < 3; ++i)
        symbolizer.add_module(h.module);
    const auto& frames = symbolizer.resolve(address(capture.return_address));
    symbolizer.add_module(h.module);
    EXPECT_EQ(&symbolizer.resolve(address(capture.return_address)), &frames);
    EXPECT_EQ(frames.front().function, kDirectName);
    EXPECT_EQ(frames.front().line, capture.line);
    EXPECT_TRUE(symbolizer.warnings().empty());
}

TEST(Symbolizer, SameFileAtAnotherBaseResolvesAlike) {
    const Helper& h = with_debug();
    gpuleak_test::Capture capture;
    h.direct(&capture);

    ModuleInfo elsewhere = h.module;
    elsewhere.base = 0x10000000;
    Symbolizer symbolizer;
    symbolizer.add_module(h.module);
    symbolizer.add_module(elsewhere);
    const uint64_t moved = address(capture.return_address) - h.module.base + elsewhere.base;
    const auto& frames = symbolizer.resolve(moved);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, kDirectName);
    EXPECT_EQ(frames[0].line, capture.line);
}

TEST(Symbolizer, SegmentsAreReadFromTheFileWhenNotRecorded) {
    const Helper& h = with_debug();
    gpuleak_test::Capture capture;
    h.direct(&capture);

    ModuleInfo bare = h.module;
    bare.segments.clear();
    Symbolizer symbolizer;
    symbolizer.add_module(bare);
    EXPECT_EQ(symbolizer.module_of(address(capture.return_address)), h.path);
    EXPECT_EQ(symbolizer.resolve(address(capture.return_address)).front().line, capture.line);
}

TEST(Symbolizer, ModuleWithoutPathIsIgnoredWithAWarning) {
    Symbolizer symbolizer;
    symbolizer.add_module(ModuleInfo{"", 0x400000, {}, {{0, 0x1000}}});
    EXPECT_EQ(symbolizer.module_of(0x400010), "");
    EXPECT_EQ(symbolizer.resolve(0x400010).front().module, "");
    EXPECT_EQ(symbolizer.warnings().size(), 1u);
}

} // namespace
} // namespace gpuleak::analyzer
