#!/usr/bin/env bash
# The analyzer's output on a set of traces, one file per (trace, options) pair, so that two builds
# can be compared byte for byte: a change to the analyzer's speed must not change what it reports.
#
#   scripts/report-identity.sh REPORT OUT_DIR TRACE...     writes OUT_DIR/<trace>.<variant>
#   diff -r BEFORE_DIR AFTER_DIR                           nothing printed: identical
#
# Variants: JSON (default stacks, native stacks, 2 warm-up iterations, a window from iteration 2),
# text, and the HTML, collapsed, perfetto and torch-snapshot exports; stderr and the exit status
# of each run are kept too. Traces come from tests/fuzz/make_seed_corpus.sh, the verdict corpus
# (tests/verdict_corpus/run_corpus.py --keep DIR) and bench/trace_synth.
set -uo pipefail

report=$1
out=$2
shift 2
mkdir -p "$out"
variants=(
    "json|--format json"
    "json-native|--format json --stacks native"
    "json-warmup|--format json --warmup 2"
    "json-window|--format json --from 2"
    "text|"
    "html|--format html"
    "collapsed|--format collapsed"
    "perfetto|--format perfetto"
    "torch|--format torch-snapshot"
)
for trace in "$@"; do
    name=$(echo "$trace" | sed 's|^/||; s|/|_|g')
    for v in "${variants[@]}"; do
        tag=${v%%|*}
        args=${v#*|}
        # shellcheck disable=SC2086 # the options are words
        "$report" "$trace" $args -o "$out/$name.$tag" 2>"$out/$name.$tag.err"
        echo "rc=$?" >>"$out/$name.$tag.err"
        # The trace's own path is part of some outputs; the directories differ between runs.
        [ -f "$out/$name.$tag" ] || : >"$out/$name.$tag"
    done
done
