#!/usr/bin/env bash
# Fails when a C or C++ source differs from what clang-format (config: .clang-format) makes of it,
# and when clang-format is not installed.
#   scripts/check-format.sh          check (ctest style.clang_format)
#   scripts/check-format.sh --fix    rewrite the files in place
set -euo pipefail
cd "$(dirname "$0")/.."
# A style check that passes without its tool checks nothing: fail instead (scripts/deps.sh, which
# setup.sh and test.sh run, installs it).
if ! command -v clang-format >/dev/null; then
    echo "check-format: clang-format not installed (apt-get install clang-format, or scripts/deps.sh)" >&2
    exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.cu')
else
    mapfile -t files < <(find analyzer bench format preload scripts tests \
        \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.cu' \) -print)
fi
if [ "${1:-}" = --fix ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! clang-format --dry-run --Werror "${files[@]}" 2>"$log"; then
    grep -E '^[^ ].*: (error|warning):' "$log" | cut -d: -f1 | sort | uniq -c |
        sed 's/^ *\([0-9]*\) /check-format: \1 places to reformat in /'
    echo "check-format: run scripts/check-format.sh --fix" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
