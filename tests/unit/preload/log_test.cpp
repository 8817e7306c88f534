// The preload's message formatting and its one write per line (preload/support/log.cpp).
#include "support/log.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace {

using gpuleak::log::Arg;
using gpuleak::log::Level;

// What one call printed on stderr (fd 2, which log.cpp writes to directly).
template <typename Call> std::string stderr_of(Call&& call) {
    std::fflush(stderr);
    FILE* capture = std::tmpfile();
    int saved = dup(STDERR_FILENO);
    dup2(fileno(capture), STDERR_FILENO);
    call();
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::string text;
    std::rewind(capture);
    for (int c; (c = std::fgetc(capture)) != EOF;)
        text += static_cast<char>(c);
    std::fclose(capture);
    return text;
}

class Log : public testing::Test {
protected:
    // GPULEAK_LOG is read once per process, at the first message.
    static void SetUpTestSuite() { setenv("GPULEAK_LOG", "debug", 1); }
};

TEST_F(Log, EachPlaceholderTakesTheNextArgument) {
    std::string text =
        stderr_of([] { gpuleak::log::warn("{} of {} in {}", -5, 7u, "cuMemAlloc_v2"); });
    EXPECT_EQ(text, "gpuleak: -5 of 7 in cuMemAlloc_v2\n");
}

TEST_F(Log, IntegersAtTheirLimits) {
    std::string text =
        stderr_of([] { gpuleak::log::info("{} {} {} {}", INT64_MIN, INT64_MAX, UINT64_MAX, 0); });
    EXPECT_EQ(text, "gpuleak: -9223372036854775808 9223372036854775807 18446744073709551615 0\n");
}

TEST_F(Log, DoubledBracesAreBraces) {
    EXPECT_EQ(stderr_of([] { gpuleak::log::warn("{{{}}} }}{{", 3); }), "gpuleak: {3} }{\n");
}

TEST_F(Log, AFormatThatDoesNotFitItsArgumentsIsPrintedAsItIs) {
    EXPECT_EQ(stderr_of([] { gpuleak::log::warn("{} and {}", 1); }), "gpuleak: {} and {}\n");
    EXPECT_EQ(stderr_of([] { gpuleak::log::warn("{:x}", 255); }), "gpuleak: {:x}\n");
    EXPECT_EQ(stderr_of([] { gpuleak::log::warn("open {", 1); }), "gpuleak: open {\n");
    EXPECT_EQ(stderr_of([] { gpuleak::log::warn("close }", 1); }), "gpuleak: close }\n");
    // Arguments left over are ignored, as fmt does.
    EXPECT_EQ(stderr_of([] { gpuleak::log::warn("only {}", 1, 2); }), "gpuleak: only 1\n");
}

TEST_F(Log, NullTextIsNamed) {
    const char* missing = nullptr;
    EXPECT_EQ(stderr_of([&] { gpuleak::log::warn("path {}", missing); }), "gpuleak: path (null)\n");
}

TEST_F(Log, ALongMessageIsCutWhereTheLineEnds) {
    std::string path(10000, 'p');
    std::string text =
        stderr_of([&] { gpuleak::log::warn("cannot create {}: {}", path, "EACCES"); });
    ASSERT_EQ(text.size(), 4096u);
    EXPECT_EQ(text.substr(0, 26), "gpuleak: cannot create " + std::string(3, 'p'));
    EXPECT_EQ(text.substr(text.size() - 6), "pp...\n");
}

TEST_F(Log, ErrnoIsLeftAsItWas) {
    stderr_of([] {
        errno = EDOM;
        gpuleak::log::warn("a message {}", 1);
        EXPECT_EQ(errno, EDOM);
    });
    // Also when the write fails (stderr closed: EBADF).
    int saved = dup(STDERR_FILENO);
    close(STDERR_FILENO);
    errno = ERANGE;
    gpuleak::log::warn("nowhere to go");
    int after = errno;
    dup2(saved, STDERR_FILENO);
    close(saved);
    EXPECT_EQ(after, ERANGE);
}

TEST_F(Log, LevelsAtOrAboveTheThresholdArePrinted) {
    // GPULEAK_LOG=debug: every level.
    EXPECT_TRUE(gpuleak::log::enabled(Level::debug));
    EXPECT_EQ(stderr_of([] { gpuleak::log::debug("d {}", 1); }), "gpuleak: d 1\n");
}

} // namespace
