#!/usr/bin/env bash
# Checks that cannot pass without their tools: style.clang_format without clang-format and the fuzz
# stage of .ci/run without clang++ must fail (exit 1, saying what is missing), not skip. Each runs
# with a PATH of the few commands it needs before that check, the tool left out.
#   tests/ci/tools_required_test.sh SOURCE_DIR
set -euo pipefail
src=$1
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for tool in bash env dirname nproc cat git; do
    ln -s "$(command -v "$tool")" "$bin/$tool"
done
fail=0
expect_failure() { # NAME EXPECTED-MESSAGE CMD...
    local name=$1 message=$2 out rc=0
    shift 2
    out=$(PATH=$bin "$@" 2>&1) || rc=$?
    if [ "$rc" -ne 1 ] || [[ $out != *"$message"* ]]; then
        echo "FAIL: $name: exit $rc, output: $out"
        fail=1
    else
        echo "ok: $name: exit 1: $out"
    fi
}
expect_failure "check-format without clang-format" "clang-format not installed" \
    "$bin/bash" "$src/scripts/check-format.sh"
expect_failure ".ci/run fuzz without clang++" "clang++ not found" \
    env GPULEAK_CI_STAGES=fuzz "$bin/bash" "$src/.ci/run"
exit $fail
