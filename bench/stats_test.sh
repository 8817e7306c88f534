#!/usr/bin/env bash
# bench.stats: scripts/bench_stats.sh's arithmetic and verdicts, on numbers worked out by hand.
set -euo pipefail
# shellcheck source=scripts/bench_stats.sh
source "$(dirname "$0")/../scripts/bench_stats.sh"

failures=0
expect() { # expect WHAT ACTUAL EXPECTED
    if [[ $2 != "$3" ]]; then
        echo "FAIL: $1: got '$2', expected '$3'"
        failures=$((failures + 1))
    fi
}

expect "median of an odd count" "$(printf '5\n1\n3\n' | median)" 3
expect "median of an even count (lower middle)" "$(printf '4\n1\n3\n2\n' | median)" 2
expect "least" "$(printf '5\n-1.5\n3\n' | least)" -1.5
expect "field" "$(field bytes_without_time "events=4 bytes=900 bytes_without_time=80")" 80
expect "field, not a prefix of another" "$(field bytes "events=4 bytes_without_time=80 bytes=900")" 900
expect "field missing" "$(field wall_ns "events=4" 2>/dev/null || echo missing)" missing
expect "spread" "$(printf '7.4\n-2.6\n3\n' | spread)" "-3 to 7"
expect "spread to two decimals" "$(printf '0.861\n0.4\n0.57\n' | spread 2)" "0.40 to 0.86"

# Rounds "a_small a_large b_small b_large" of 1 and 101 units: A costs 10 a unit, B 10 + 3, 10 + 5
# and 10 - 1 (a round where the machine slowed A down).
rounds=$'100 1100 200 1500\n100 1100 200 1700\n300 1300 200 1100'
expect "paired differences" "$(echo "$rounds" | paired_differences 1 101 | tr '\n' ' ')" "3.000 5.000 -1.000 "
# The least times: A 100 and 1100 (10 a unit), B 200 and 1100 (9 a unit).
expect "A's best cost per unit" "$(echo "$rounds" | best_per_unit 1 101 1)" "10.000"
expect "B's best cost per unit" "$(echo "$rounds" | best_per_unit 1 101 3)" "9.000"
expect "best difference" "$(echo "$rounds" | best_difference 1 101)" "-1.000"
# A slow round adds to one side only: the least times ignore it where the median would not.
slow=$'100 1100 200 1400\n100 1100 200 1400\n100 5100 200 1400'
expect "best difference past a slow round" "$(echo "$slow" | best_difference 1 101)" "2.000"
# The minima are taken column by column: the least small and the least large run may be of
# different rounds.
mixed=$'100 1200 300 1500\n200 1100 200 1600'
expect "minima column by column" "$(echo "$mixed" | best_per_unit 1 101 1)" "10.000"
# Python rounds: no small runs, the loop's own time.
expect "a round without small runs" "$(echo "0 600000 0 660000" | best_difference 0 3000)" "20.000"

expect "at most, met" "$(verdict 40 '<=' 40)" "yes"
expect "at most, missed" "$(verdict 41 '<=' 40)" "**no**"
expect "at least, met" "$(verdict 3.1 '>=' 3)" "yes"
expect "at least, missed" "$(verdict 0.4 '>=' 3)" "**no**"
expect "a positive cost is judged" "$(cost_verdict 39 '<=' 40)" "yes"
expect "a negative cost is not a target met" "$(cost_verdict -137 '<=' 200)" "not measured (difference -137: noise)"
expect "a zero cost is not a target met" "$(cost_verdict 0 '<=' 200)" "not measured (difference 0: noise)"
expect "ratio of costs" "$(cost_ratio 291 640)" "0.45"
expect "ratio with a negative numerator" "$(cost_ratio -5 640)" "-"
expect "ratio with a zero denominator" "$(cost_ratio 291 0)" "-"
expect "verdict on a ratio" "$(ratio_verdict 1.43 '<=' 1.5)" "yes"
expect "verdict on no ratio" "$(ratio_verdict - '<=' 1.5)" "not measured (a difference ≤ 0: noise)"

if ((failures)); then exit 1; fi
echo "bench.stats: all passed"
