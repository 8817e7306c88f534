// The three line-table decoders: hand-built tables for the edge cases, then whole fixtures
// dumped from real interpreters (run_linetables.py), which must match PyCode_Addr2Line exactly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "python/line_table.h"

namespace pd = gpuleak::pydecode;

namespace {

constexpr uint32_t k39 = 0x030912f0, k310 = 0x030a0df0, k311 = 0x030b07f0, k312 = 0x030c01f0;

std::vector<uint8_t> from_hex(const std::string& hex) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

// One 3.11+ entry header: bit 7, the code, and the length in code units.
uint8_t entry(int code, int units) {
    return static_cast<uint8_t>(0x80 | (code << 3) | (units - 1));
}

} // namespace

TEST(LineTable, LnotabPairsApplyUntilPastTheOffset) {
    // Line 10; +1 line at byte 0; +2 at byte 6; an address-only pair; -1 at byte 300 (after 255).
    std::vector<uint8_t> t = {0, 1, 6, 2, 255, 0, 39, 0xff};
    EXPECT_EQ(pd::lnotab_line(t, 10, -1), 10);
    EXPECT_EQ(pd::lnotab_line(t, 10, 0), 11);
    EXPECT_EQ(pd::lnotab_line(t, 10, 4), 11);
    EXPECT_EQ(pd::lnotab_line(t, 10, 6), 13);
    EXPECT_EQ(pd::lnotab_line(t, 10, 299), 13);
    EXPECT_EQ(pd::lnotab_line(t, 10, 300), 12);
    EXPECT_EQ(pd::line_for_offset(k39, t, 10, 300), 12);
    EXPECT_EQ(pd::lnotab_line({}, 7, 4), 7);
}

TEST(LineTable, Linetable310HalfOpenRangesAndNoLine) {
    // [0,4) line 5, zero-length +3, [4,8) line 9 (5+3+1), [8,10) no line, [10,12) line 8.
    std::vector<uint8_t> t = {4, 1, 0, 3, 4, 1, 2, 0x80, 2, 0xff};
    EXPECT_EQ(pd::linetable310_line(t, 4, -2), 4);
    EXPECT_EQ(pd::linetable310_line(t, 4, 0), 5);
    EXPECT_EQ(pd::linetable310_line(t, 4, 2), 5);
    EXPECT_EQ(pd::linetable310_line(t, 4, 4), 9);
    EXPECT_EQ(pd::linetable310_line(t, 4, 8), -1);
    EXPECT_EQ(pd::linetable310_line(t, 4, 10), 8);
    EXPECT_EQ(pd::linetable310_line(t, 4, 12), -1);
    EXPECT_EQ(pd::line_for_offset(k310, t, 4, 8), 0); // "no line" is reported as 0
}

TEST(LineTable, LocationTableForms) {
    std::vector<uint8_t> t = {
        entry(0, 1),  0x05,                   // short form, line 20: [0,2)
        entry(11, 2), 4,    9,                // one-line form +1 -> 21: [2,6)
        entry(13, 1), 0x06,                   // no columns, svarint 6 -> +3 -> 24: [6,8)
        entry(14, 3), 0x05, 0x02, 0x01, 0x05, // long form, svarint 5 -> -2 -> 22: [8,14)
        entry(15, 1),                         // no location: [14,16)
        entry(10, 1), 1,    2,                // one-line +0 -> still 22: [16,18)
    };
    EXPECT_EQ(pd::location_table_line(t, 20, -2), 20);
    EXPECT_EQ(pd::location_table_line(t, 20, 0), 20);
    EXPECT_EQ(pd::location_table_line(t, 20, 2), 21);
    EXPECT_EQ(pd::location_table_line(t, 20, 4), 21);
    EXPECT_EQ(pd::location_table_line(t, 20, 6), 24);
    EXPECT_EQ(pd::location_table_line(t, 20, 8), 22);
    EXPECT_EQ(pd::location_table_line(t, 20, 12), 22);
    EXPECT_EQ(pd::location_table_line(t, 20, 14), -1);
    EXPECT_EQ(pd::location_table_line(t, 20, 16), 22);
    EXPECT_EQ(pd::location_table_line(t, 20, 18), -1);
    EXPECT_EQ(pd::line_for_offset(k312, t, 20, 14), 0);
}

TEST(LineTable, LocationTableMultiByteVarint) {
    // svarint 2*200 = 400 -> 6-bit chunks 0x10|0x40, 0x06: line += 200.
    std::vector<uint8_t> t = {entry(13, 1), 0x50, 0x06, entry(13, 1), 0x03};
    EXPECT_EQ(pd::location_table_line(t, 1, 0), 201);
    EXPECT_EQ(pd::location_table_line(t, 1, 2), 200);
}

TEST(LineTable, CallSpanningLinesUsesTheEntryThatContainsTheOffset) {
    // A call over lines 2-4: its argument loads on lines 3 and 4, the CALL itself back on line 2.
    // A decoder stopping at the first entry whose *end* reaches the offset would say 4.
    std::vector<uint8_t> t = {entry(13, 1), 0x04, entry(13, 1), 0x02,
                              entry(13, 1), 0x02, entry(13, 4), 0x05};
    EXPECT_EQ(pd::line_for_offset(k311, t, 0, 6), 2);
    EXPECT_EQ(pd::line_for_offset(k311, t, 0, 12), 2);
    EXPECT_EQ(pd::line_for_offset(k311, t, 0, 4), 4);
}

TEST(LineTable, PositionStartIsWhereOneSourcePositionBegins) {
    // 3.11's `sum(g)`: the argument's load [0,2) at columns 4-5, then PRECALL, its cache and CALL
    // with its caches [2,16) at columns 0-6, in two entries (an entry holds at most 8 units);
    // the next line's load [16,18) at the same columns is another position.
    std::vector<uint8_t> t = {
        entry(0, 1),  0x41,    // short form: column 0<<3 | 4, end 4+1
        entry(10, 4), 0,    6, // one-line +0: columns 0-6, [2,10)
        entry(10, 3), 0,    6, // the same position: [10,16)
        entry(11, 1), 0,    6, // +1 line, same columns: [16,18)
    };
    EXPECT_EQ(pd::position_start(k311, t, 0), 0);
    for (int offset : {2, 4, 8, 10, 14})
        EXPECT_EQ(pd::position_start(k311, t, offset), 2) << offset;
    EXPECT_EQ(pd::position_start(k311, t, 16), 16);
    EXPECT_EQ(pd::position_start(k311, t, 18), 18); // past the table: itself
    EXPECT_EQ(pd::position_start(k311, t, -2), -2);
    // Long and no-column forms compare end lines and columns too.
    std::vector<uint8_t> l = {
        entry(14, 1), 0x00, 0x01,         0x01, 0x03, // lines +0..+1, columns 0-2
        entry(14, 1), 0x00, 0x01,         0x01, 0x03, // the same
        entry(14, 1), 0x00, 0x00,         0x01, 0x03, // one line: another
        entry(13, 1), 0x00, entry(13, 1), 0x00, entry(15, 1), entry(15, 1)};
    EXPECT_EQ(pd::position_start(k312, l, 2), 0);
    EXPECT_EQ(pd::position_start(k312, l, 4), 4);
    EXPECT_EQ(pd::position_start(k312, l, 8), 6);
    EXPECT_EQ(pd::position_start(k312, l, 12), 10);
    // Before 3.11 an offset is its own place, whatever the bytes.
    EXPECT_EQ(pd::position_start(k310, t, 14), 14);
    EXPECT_EQ(pd::position_start(k39, t, 14), 14);
    // A corrupt table cannot say.
    std::vector<uint8_t> corrupt = {0x05, 0x06};
    EXPECT_EQ(pd::position_start(k311, corrupt, 2), 2);
}

TEST(LineTable, CorruptLocationTableIsNoLine) {
    std::vector<uint8_t> t = {0x05, 0x06};
    EXPECT_EQ(pd::location_table_line(t, 3, 0), -1);
    // Deltas of 2^30 twice: past int, which must be no line (and no signed overflow).
    std::vector<uint8_t> far = {entry(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x02,
                                entry(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x02};
    EXPECT_EQ(pd::location_table_line(far, 1, 0), (1 << 30) + 1);
    EXPECT_EQ(pd::location_table_line(far, 1, 2), -1);
    EXPECT_EQ(pd::position_start(k311, far, 2), 2);
    std::vector<uint8_t> truncated = {entry(13, 1), 0x40};
    EXPECT_EQ(pd::location_table_line(truncated, 3, 0), -1);
}

// Set by run_linetables.py; skipped in plain unit-test runs.
TEST(LineTableFixture, MatchesPyCodeAddr2Line) {
    const char* path = std::getenv("GPULEAK_LINETABLE_FIXTURE");
    if (!path) GTEST_SKIP() << "GPULEAK_LINETABLE_FIXTURE not set";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    nlohmann::json fixture = nlohmann::json::parse(in);
    auto version = fixture["version_hex"].get<uint32_t>();
    size_t offsets = 0, starts_checked = 0, positions_checked = 0, mismatches = 0;
    for (const auto& code : fixture["codes"]) {
        std::vector<uint8_t> table = from_hex(code["table"].get<std::string>());
        int first = code["firstlineno"].get<int>();
        const auto& lines = code["lines"];
        for (size_t i = 0; i < lines.size(); ++i) {
            int offset = 2 * static_cast<int>(i) - 2;
            int want = lines[i].get<int>();
            int got = version >> 16 <= 0x0309   ? pd::lnotab_line(table, first, offset)
                      : version >> 16 == 0x030a ? pd::linetable310_line(table, first, offset)
                                                : pd::location_table_line(table, first, offset);
            int reported = pd::line_for_offset(version, table, first, offset);
            ++offsets;
            if (got != want || reported != (want < 0 ? 0 : want)) {
                if (++mismatches <= 10) {
                    ADD_FAILURE() << code["name"].get<std::string>() << " offset " << offset
                                  << ": CPython " << want << ", decoder " << got;
                }
            }
        }
        // From 3.11: where each instruction's run of one source position begins, from
        // co_positions(); before, the offset itself.
        if (!code.contains("starts")) {
            EXPECT_LT(version >> 16, 0x030bu) << code["name"].get<std::string>();
            for (int offset = 0; offset < 2 * static_cast<int>(lines.size()) - 2; offset += 2) {
                EXPECT_EQ(pd::position_start(version, table, offset), offset);
                pd::SourcePosition none{};
                EXPECT_FALSE(pd::source_position(version, table, first, offset, none));
            }
            continue;
        }
        const auto& starts = code["starts"];
        for (size_t i = 0; i < starts.size(); ++i) {
            int offset = 2 * static_cast<int>(i);
            int want = starts[i].get<int>();
            int got = pd::position_start(version, table, offset);
            ++starts_checked;
            if (got != want && ++mismatches <= 10) {
                ADD_FAILURE() << code["name"].get<std::string>() << " offset " << offset
                              << ": position starts at " << want << ", decoder " << got;
            }
        }
        // The whole position of every instruction, where co_positions() gives its columns.
        const auto& runs = code["positions"];
        for (size_t r = 0; r < runs.size(); ++r) {
            const int end = r + 1 < runs.size() ? runs[r + 1][0].get<int>()
                                                : 2 * static_cast<int>(starts.size());
            const auto& run = runs[r];
            pd::SourcePosition want{run[1].get<int64_t>(), run[2].get<int64_t>(),
                                    run[3].get<int64_t>(), run[4].get<int64_t>()};
            const bool has_columns =
                want.line >= 0 && want.end_line >= 0 && want.column >= 0 && want.end_column >= 0;
            for (int offset = run[0].get<int>(); offset < end; offset += 2) {
                pd::SourcePosition got{};
                bool found = pd::source_position(version, table, first, offset, got);
                ++positions_checked;
                if ((found != has_columns || (found && !(got == want))) && ++mismatches <= 10) {
                    ADD_FAILURE() << code["name"].get<std::string>() << " offset " << offset
                                  << ": co_positions " << run.dump() << ", decoder "
                                  << (found ? "" : "none ") << got.line << "," << got.end_line
                                  << "," << got.column << "," << got.end_column;
                }
            }
        }
    }
    std::cout << fixture["python"].get<std::string>() << ": " << fixture["codes"].size()
              << " code objects, " << offsets << " offsets, " << starts_checked
              << " position starts, " << positions_checked << " positions, " << mismatches
              << " mismatches\n";
    EXPECT_EQ(mismatches, 0u);
    EXPECT_GT(offsets, 10000u);
    if (version >> 16 >= 0x030b) {
        EXPECT_GT(starts_checked, 10000u);
        EXPECT_EQ(positions_checked, starts_checked);
    }
}
