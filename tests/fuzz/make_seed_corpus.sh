#!/usr/bin/env bash
# Seed corpus for the trace reader fuzzer, made from real traces: test programs run under the
# preload against the fake CUDA libraries, in the variants the recorder can produce (compressed or
# raw blocks, capped, killed mid-run, several threads, fork, VMM, failed allocations), plus a few
# cut-short copies. Nothing binary is committed; run this from the build that owns the preload.
#   make_seed_corpus.sh BUILD_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=$2
apps=$build/tests/apps
preload=$build/lib/libgpuleak.so
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

n=0
# trace NAME [ENV=VALUE...] -- PROGRAM [ARGS...]
trace() {
    local name=$1
    shift
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    local dir=$work/$name
    mkdir -p "$dir"
    (cd "$dir" && env "${envs[@]}" LD_PRELOAD="$preload" GPULEAK_OUTPUT="$dir/t.%p.bin" "$@" >/dev/null 2>&1) || true
    for f in "$dir"/*.bin; do
        [[ -f $f ]] || continue
        cp "$f" "$out/$name.$((n++)).trace"
    done
}

for compress in 0 1; do
    c=GPULEAK_COMPRESS=$compress
    trace direct$compress "$c" -- "$apps/path_direct"
    trace runtime$compress "$c" -- "$apps/path_runtime_dynamic"
    trace static$compress "$c" -- "$apps/path_runtime_static"
    trace vmm$compress "$c" -- "$apps/vmm"
    trace edge$compress "$c" -- "$apps/edge_cases"
    trace oom$compress "$c" FAKECUDA_CAPACITY=67108864 -- "$apps/scenario_oom"
    trace leak$compress "$c" -- "$apps/scenario_leak_loop"
    trace threads$compress "$c" -- "$apps/scenario_threads" 50
    trace fork$compress "$c" -- "$apps/scenario_fork"
    trace devices$compress "$c" FAKECUDA_DEVICES=2 -- "$apps/scenario_two_devices"
done
trace capped GPULEAK_COMPRESS=0 GPULEAK_MAX_BYTES=4096 -- "$apps/scenario_threads" 200
trace tiny_blocks GPULEAK_COMPRESS=0 GPULEAK_FLUSH_MS=1 -- "$apps/scenario_threads" 20
if command -v python3 >/dev/null; then
    trace python GPULEAK_COMPRESS=0 LD_LIBRARY_PATH="$build/tests/fake" -- python3 "$here/../apps/python_ctypes.py"
fi

# Cut-short copies: what a SIGKILL or a full disk leaves behind.
for f in "$out"/direct0.*.trace "$out"/threads0.*.trace; do
    size=$(stat -c %s "$f")
    for cut in 16 40 $((size / 3)) $((size / 2)) $((size - 7)); do
        ((cut > 0 && cut < size)) && head -c "$cut" "$f" >"${f%.trace}.cut$cut.trace"
    done
done

count=$(find "$out" -type f | wc -l)
if ((count < 10)); then
    echo "make_seed_corpus: only $count traces were written" >&2
    exit 1
fi
echo "make_seed_corpus: $count traces in $out"
