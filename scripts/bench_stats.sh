# Arithmetic and verdicts of scripts/bench.sh, sourced by it and by bench/stats_test.sh.
#
# The costs bench.sh reports are differences of two runs' CPU times (traced minus untraced, walk on
# minus off). On a noisy VM such a difference can come out at zero or below, which would "meet"
# any "at most" target: a verdict on it says "not measured" instead, and a ratio of it is "-".

calc() { awk "BEGIN { printf \"%.${2:-0}f\", $1 }"; }

# Reads numbers, one per line; prints the least.
least() { sort -n | head -1; }

# field NAME TEXT: the value of NAME=VALUE among TEXT's words (a benchmark program's output line);
# fails where there is none, so that a changed output stops the run rather than give an empty row.
field() {
    local word
    for word in $2; do
        [[ $word == "$1="* ]] && { echo "${word#*=}"; return 0; }
    done
    echo "bench: no $1= in: $2" >&2
    return 1
}

# Reads numbers, one per line; prints the middle one (the lower middle of an even count).
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# spread [DIGITS]: reads numbers, one per line; prints "lowest to highest", rounded to DIGITS
# decimals (default 0).
spread() { sort -n | awk -v d="${1:-0}" '{ v[NR] = $1 } END { f = "%." d "f"; printf f " to " f, v[1], v[NR] }'; }

# verdict VALUE OP TARGET -> "yes" / "**no**" (OP: <= or >=).
verdict() {
    awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN { ok = (op == "<=") ? (v <= t) : (v >= t); print ok ? "yes" : "**no**" }'
}

# cost_verdict COST OP TARGET: a verdict on a cost that is a difference of runs; "not measured"
# where the difference is not positive.
cost_verdict() {
    if awk -v v="$1" 'BEGIN { exit !(v > 0) }'; then
        verdict "$1" "$2" "$3"
    else
        echo "not measured (difference $1: noise)"
    fi
}

# cost_ratio A B [DIGITS]: A / B for two costs that are differences of runs; "-" unless both are
# positive.
cost_ratio() {
    if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && b > 0) }'; then
        calc "$1 / $2" "${3:-2}"
    else
        echo "-"
    fi
}

# ratio_verdict RATIO OP TARGET: a verdict on a cost_ratio ("-": not measured).
ratio_verdict() {
    if [[ $1 == - ]]; then echo "not measured (a difference ≤ 0: noise)"; else verdict "$1" "$2" "$3"; fi
}

# The rounds below are lines of four CPU times "a_small a_large b_small b_large": programs A and B
# (untraced and traced, say), each run with UNITS_SMALL and with UNITS_LARGE units of work, all four
# in turn within a round so that both programs see the same phases of a noisy machine.

# paired_differences UNITS_SMALL UNITS_LARGE: reads rounds; prints, one per line, each round's B
# cost per unit minus A's (their spread shows the noise).
paired_differences() {
    awk -v s="$1" -v l="$2" '{ printf "%.3f\n", (($4 - $3) - ($2 - $1)) / (l - s) }'
}

# best_per_unit UNITS_SMALL UNITS_LARGE COLUMN: reads rounds; prints the cost per unit of the
# program in COLUMN (1: A, 3: B) from its least CPU time at each count. A neighbour's load only ever
# adds CPU time (a VM's stolen cycles count as the program's), so the least time of several runs is
# the closest to what the program itself costs.
best_per_unit() {
    awk -v s="$1" -v l="$2" -v c="$3" '
        NR == 1 || $c < lo_small { lo_small = $c }
        NR == 1 || $(c + 1) < lo_large { lo_large = $(c + 1) }
        END { printf "%.3f\n", (lo_large - lo_small) / (l - s) }'
}

# best_difference UNITS_SMALL UNITS_LARGE: reads rounds; prints B's best cost per unit minus A's.
best_difference() {
    local rounds
    rounds=$(cat)
    calc "$(echo "$rounds" | best_per_unit "$1" "$2" 3) - $(echo "$rounds" | best_per_unit "$1" "$2" 1)" 3
}
