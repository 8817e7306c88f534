// The grammars every GPULEAK_* variable and every gate option is read with.
#include <gtest/gtest.h>

#include "gpuleak/common/parse.h"

namespace gpuleak::common {
namespace {

TEST(ParseBool, EverySpellingInAnyCase) {
    for (const char* yes : {"1", "true", "TRUE", "True", "yes", "YES", "on", "On", " on "})
        EXPECT_EQ(parse_bool(yes), true) << yes;
    for (const char* no : {"0", "false", "False", "no", "NO", "off", "OFF", "\toff\n"})
        EXPECT_EQ(parse_bool(no), false) << no;
    for (const char* bad : {"", " ", "2", "00", "01", "y", "n", "enable", "nope", "truee", "o"})
        EXPECT_EQ(parse_bool(bad), std::nullopt) << bad;
}

TEST(ParseSize, PlainBytesAndBinaryUnitsInAnyCase) {
    EXPECT_EQ(parse_size("0"), 0u);
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("4096b"), 4096u);
    EXPECT_EQ(parse_size("64K"), 64u << 10);
    EXPECT_EQ(parse_size("64k"), 64u << 10);
    EXPECT_EQ(parse_size("64KB"), 64u << 10);
    EXPECT_EQ(parse_size("64KiB"), 64u << 10);
    EXPECT_EQ(parse_size("64M"), 64u << 20);
    EXPECT_EQ(parse_size("512MiB"), 512u << 20);
    EXPECT_EQ(parse_size("1GB"), 1ull << 30);
    EXPECT_EQ(parse_size("1 GB"), 1ull << 30);
    EXPECT_EQ(parse_size(" 2gib "), 2ull << 30);
    EXPECT_EQ(parse_size("3T"), 3ull << 40);
    EXPECT_EQ(parse_size("18446744073709551615"), UINT64_MAX);
}

TEST(ParseSize, DecimalsAreExactAndDropFractionsOfAByte) {
    EXPECT_EQ(parse_size("1.5G"), 3ull << 29);   // not 1 byte, not 4 KiB
    EXPECT_EQ(parse_size("1.5 GB"), 3ull << 29); // what the gates always accepted
    EXPECT_EQ(parse_size("0.5K"), 512u);
    EXPECT_EQ(parse_size(".25M"), 256u << 10);
    EXPECT_EQ(parse_size("1.0009765625K"), 1025u);
    EXPECT_EQ(parse_size("1.7"), 1u);
    EXPECT_EQ(parse_size("0.1"), 0u);
    EXPECT_EQ(parse_size("2.000000000000000000000001G"), 2ull << 30);
}

TEST(ParseSize, MalformedOrTooLargeIsRefused) {
    for (const char* bad : {"", " ", "G", ".", "1.", "1.G", "-1", "+1", "1e3", "0x10", "inf", "nan",
                            "12XB", "1 2", "1KK", "1.5.5", "64 K B", "1GiBs", "1,5G"})
        EXPECT_EQ(parse_size(bad), std::nullopt) << bad;
    EXPECT_EQ(parse_size("18446744073709551616"), std::nullopt);
    EXPECT_EQ(parse_size("16777216T"), std::nullopt); // 2^64
    EXPECT_EQ(parse_size("16777215.99999T").has_value(), true);
}

TEST(ParseUnsigned, DigitsOnly) {
    EXPECT_EQ(parse_unsigned("0"), 0u);
    EXPECT_EQ(parse_unsigned(" 256 "), 256u);
    EXPECT_EQ(parse_unsigned("18446744073709551615"), UINT64_MAX);
    for (const char* bad : {"", "-1", "10M", "1.5", "abc", "18446744073709551616", "0x10"})
        EXPECT_EQ(parse_unsigned(bad), std::nullopt) << bad;
}

} // namespace
} // namespace gpuleak::common
