#!/usr/bin/env bash
# One command on a fresh Debian machine: install dependencies, build Release into build/, run a demo.
#   ./scripts/setup.sh [--no-demo]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/deps.sh"
gpuleak_install_deps

cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j"$(nproc)"
echo "gpuleak: built $root/build/lib/libgpuleak.so, $root/build/bin/gpuleak-report, $root/build/bin/gpuleak"

[ "${1:-}" = "--no-demo" ] && exit 0

# The demo runs a small program against the fake CUDA libraries of the test suite: it leaks one
# buffer per loop iteration from keep_output_leak().
demo="$root/build/tests/apps/scenario_leak_loop"
if [ ! -d "$root/build/tests/fake" ]; then
    echo "gpuleak: no demo: the fake CUDA libraries it runs on need a CUDA toolkit's headers" >&2
    exit 0
fi
if [ ! -x "$demo" ]; then
    echo "gpuleak: demo program $demo was not built" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo
echo "== demo: $root/build/bin/gpuleak run -o $work/demo.%p.bin -- $demo"
(cd "$work" && "$root/build/bin/gpuleak" run -o "$work/demo.%p.bin" -- "$demo")
echo
"$root/build/bin/gpuleak-report" "$work"/demo.*.bin
