#!/usr/bin/env bash
# gpu-validate.sh: proves gpuleak on a real GPU. Runs CUDA C++ programs and PyTorch / CuPy / JAX
# scenarios that print their own ground truth under build/lib/libgpuleak.so, compares each with
# gpuleak-report's JSON, times a training loop with and without the tracer, and prints one table
# LAST: check | mode | expected | observed | verdict. Exit status 0 when no row is a FAIL.
#
# Without a GPU it still does what it can (the CI part, ctest gpu_validate.no_gpu): the preflight,
# building the CUDA programs with nvcc, and the full check pipeline on the fake CUDA driver; every
# GPU row is then a SKIP. --dry-run (ctest gpu_validate.dry_run) runs the framework part too, with
# scripts/gpu/dryrun/site-packages/torch.py, a stand-in for torch, on the fake driver: it tests this
# script and its checks, not gpuleak on a GPU. The stand-in sits in a site-packages folder, as torch
# does, so the report's headline skips it. See docs/gpu-validation.md.
#
# usage: scripts/gpu-validate.sh [--build DIR] [--no-gpu | --dry-run]
#
# environment:
#   OUT                     folder for the full logs (gpu-validate.log, results.tsv, runs.tgz, traces.tgz)
#   GPU_VALIDATE_PYTHON     the Python with torch (default python3)
#   GPU_VALIDATE_MODES      PyTorch allocator modes (default: default cudaMallocAsync no-caching expandable)
#   GPU_VALIDATE_JOBS       scenarios run at once on the GPU (default 4; the overhead runs alone)
#   GPU_VALIDATE_TIMEOUT    seconds for one traced program or report (default 240)
#   GPU_VALIDATE_WORK       work folder to use and keep (default: a temporary one)
set -uo pipefail

root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
gpu_dir="$root/scripts/gpu"
build="$root/build"
want_gpu=auto
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --no-gpu) want_gpu=no; shift ;;
    --dry-run) want_gpu=dry-run; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-validate: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

# Interpreters by their real path: a version-manager shim (pyenv) costs a second per start.
real_python() { "$1" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$1"; }
py=$(real_python "${GPU_VALIDATE_PYTHON:-python3}") # runs the scenarios
tool_py=$(real_python python3)                      # runs check.py, table.py and small probes
read -r -a torch_modes <<<"${GPU_VALIDATE_MODES:-default cudaMallocAsync no-caching expandable}"
jobs=${GPU_VALIDATE_JOBS:-4}
step_timeout=${GPU_VALIDATE_TIMEOUT:-240}
keep_work=0
if [ -n "${GPU_VALIDATE_WORK:-}" ]; then
    work=$GPU_VALIDATE_WORK
    keep_work=1
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-validate.XXXXXX")
fi
results="$work/results.tsv"
: >"$results"

have_torch=no
label="" # "dry-run " before every framework row of a dry run
lib="$build/lib/libgpuleak.so"
report_bin="$build/bin/gpuleak-report"
front="$build/bin/gpuleak"

# One result row (the table's columns).
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$results"; }
say() { echo "gpu-validate: $*"; }

# --- 0. preflight ------------------------------------------------------------------------------

# The machine's own libraries come first; from .gpu-runtime/ (scripts/gpu/pack-runtime-libs.sh)
# only those it lacks are linked into $work/runtime-libs, so a traced program sees no other copy of
# a library it already has.
runtime_libs="$work/runtime-libs"
missing_libs() {
    ldd "$lib" "$report_bin" "$@" 2>&1 | awk '/=> not found/ { print $1 }' | sort -u
}
has_lib() { "$tool_py" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$1" 2>/dev/null; }

setup_runtime_libs() {
    local packed="$root/.gpu-runtime"
    mkdir -p "$runtime_libs"
    export LD_LIBRARY_PATH="$runtime_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    [ -d "$packed" ] || { say "no .gpu-runtime/ (scripts/gpu/pack-runtime-libs.sh makes one); using this machine's libraries"; return; }
    local name extra=()
    for _ in 1 2 3; do # a packed library can need another packed one
        local names=()
        mapfile -t names < <(missing_libs "${extra[@]}")
        has_lib libunwind.so.8 || names+=(libunwind.so.8)
        [ ${#names[@]} -gt 0 ] || break
        for name in "${names[@]}"; do
            [ -e "$packed/lib/$name" ] && [ ! -e "$runtime_libs/$name" ] && ln -s "$packed/lib/$name" "$runtime_libs/$name"
        done
        extra=("$runtime_libs"/*.so*)
        [ -e "${extra[0]}" ] || extra=()
    done
    # libstdc++ / libgcc_s only when the machine's own are too old for our binaries.
    if ldd "$lib" "$report_bin" 2>&1 | grep -q "version .GLIBCXX\|version .CXXABI\|version .GCC_"; then
        for name in "$packed"/core/*; do ln -sf "$name" "$runtime_libs/"; done
    fi
    local linked
    linked=$(cd "$runtime_libs" && echo *.so*)
    say "libraries taken from .gpu-runtime/: ${linked//\*.so\*/none needed}"
}

preflight() {
    say "build: $build; work: $work"
    local ok=1
    for f in "$lib" "$report_bin" "$front"; do
        if [ ! -e "$f" ]; then
            row "preflight" "-" "$(basename "$f") built" "missing: $f" FAIL
            ok=0
        fi
    done
    [ $ok = 1 ] || return 1
    setup_runtime_libs
    local missing
    missing=$(ldd "$lib" "$report_bin" 2>&1 | grep "not found" | sed 's/ (required by.*//' | sort -u | tr -s '\n\t ' ' ')
    if [ -n "$missing" ]; then
        row "preflight ldd" "-" "every library resolves" "$missing" FAIL
        ldd "$lib" "$report_bin"
        return 1
    fi
    if ! "$report_bin" --help >/dev/null 2>"$work/report-help.err"; then
        row "preflight ldd" "-" "gpuleak-report runs" "$(head -c 200 "$work/report-help.err")" FAIL
        return 1
    fi
    row "preflight ldd" "-" "every library resolves" "libgpuleak.so, gpuleak-report ok" PASS
    if has_lib libunwind.so.8; then
        row "preflight libunwind" "-" "libunwind.so.8 loadable" "yes" PASS
    else
        row "preflight libunwind" "-" "libunwind.so.8 loadable" "no: native stacks would be empty" FAIL
    fi
}

gpu_present() {
    case "$want_gpu" in no | dry-run) return 1 ;; esac
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

# --- running a program under the preload ---------------------------------------------------------

# traced DIR CMD...: runs CMD in DIR under `gpuleak run`, output in DIR/stdout, DIR/stderr.
traced() {
    local dir=$1
    shift
    (cd "$dir" && timeout -k 10 "$step_timeout" "$front" run -o "$dir/trace.%p.bin" -- "$@" \
        >"$dir/stdout" 2>"$dir/stderr")
}

# report_for DIR PID: DIR/report.json from DIR/trace.PID.bin; prints why not on failure.
report_for() {
    local dir=$1 pid=$2
    local trace="$dir/trace.$pid.bin"
    [ -f "$trace" ] || { echo "no trace.$pid.bin written"; return 1; }
    timeout -k 10 "$step_timeout" "$report_bin" "$trace" --format json >"$dir/report.json" 2>"$dir/report.stderr" \
        || { echo "gpuleak-report failed: $(tail -c 200 "$dir/report.stderr")"; return 1; }
}

json_field() { "$tool_py" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null; }

exit_text() {
    case "$1" in
    124 | 137) echo "timed out after ${step_timeout}s (hang?)" ;;
    *) echo "exit $1: $(grep -v '^gpuleak: ' "$2" 2>/dev/null | tail -n 3 | tr '\n' ' ' | tail -c 200)" ;;
    esac
}

# check_native_run DIR MODE CMD...: one alloc_paths run, traced and checked.
check_native_run() {
    local dir=$1 mode=$2
    shift 2
    mkdir -p "$dir"
    traced "$dir" "$@"
    local status=$? why
    cp "$dir/stdout" "$dir/truth.json"
    if [ $status -ne 0 ]; then
        row "cuda alloc_paths" "$mode" "exit 0" "$(exit_text $status "$dir/stderr")" FAIL
        return
    fi
    if ! why=$(report_for "$dir" "$(json_field "$dir/truth.json" pid)"); then
        row "cuda alloc_paths" "$mode" "a report" "$why" FAIL
        return
    fi
    "$tool_py" "$gpu_dir/check.py" native "$dir/truth.json" "$dir/report.json" "$mode" >>"$results"
}

# --- 1. CUDA C++ programs ----------------------------------------------------------------------

find_nvcc() {
    local c
    for c in "$(command -v nvcc 2>/dev/null)" "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
        [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

cuda_programs() {
    local gpu=$1
    say "== 1. CUDA C++ programs"
    # The host code of alloc_paths.cu on the fake driver: the same checks, everywhere.
    local fake="$build/scripts/gpu/alloc_paths_fake"
    if [ -x "$fake" ]; then
        check_native_run "$work/cuda/fake" fake-driver \
            env LD_LIBRARY_PATH="$build/tests/fake:$LD_LIBRARY_PATH" "$fake" fake-driver
    else
        row "cuda alloc_paths" fake-driver "built by cmake" "missing: $fake" SKIP
    fi

    local nvcc
    if [ "$gpu" = dry-run ]; then
        row "cuda nvcc build" "shared, static" "nvcc" "dry run: not built" SKIP
        return
    fi
    if ! nvcc=$(find_nvcc); then
        row "cuda nvcc build" "shared, static" "nvcc" "nvcc not found: skipped" SKIP
        return
    fi
    say "building alloc_paths with $nvcc ($("$nvcc" --version | tail -1))"
    # One object, linked twice: -cudart only chooses what the link pulls in.
    local bin="$work/cuda/bin" variant
    mkdir -p "$bin"
    local compiled=0
    "$nvcc" -std=c++17 -O2 -g -c -o "$bin/alloc_paths.o" "$gpu_dir/alloc_paths.cu" >"$work/cuda/nvcc.log" 2>&1 && compiled=1
    for variant in shared static; do
        if [ $compiled = 1 ]; then
            "$nvcc" -Xlinker --export-dynamic -cudart $variant -o "$bin/alloc_paths_$variant" "$bin/alloc_paths.o" -lcuda \
                >>"$work/cuda/nvcc.log" 2>&1
        fi
        if [ ! -x "$bin/alloc_paths_$variant" ]; then
            row "cuda nvcc build" $variant "compiles and links" "failed: $(tail -c 200 "$work/cuda/nvcc.log")" FAIL
            continue
        fi
        row "cuda nvcc build" $variant "compiles and links" "ok" PASS
        if [ "$gpu" = yes ]; then
            check_native_run "$work/cuda/$variant" $variant "$bin/alloc_paths_$variant" $variant
        else
            row "cuda alloc_paths" $variant "run on a GPU" "no GPU: skipped" SKIP
        fi
    done
}

# --- 2, 3. framework scenarios -------------------------------------------------------------------

torch_mode_env() {
    case "$1" in
    default) ;;
    cudaMallocAsync) echo "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync" ;;
    no-caching) echo "PYTORCH_NO_CUDA_MEMORY_CACHING=1" ;;
    expandable) echo "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" ;;
    *) return 1 ;;
    esac
}

# python_case NAME MODE SCRIPT [VAR=VALUE...]: one scenario, traced, reported, checked. Its rows go
# to its own rows.tsv (cases run in parallel).
python_case() {
    local name=$1 mode=$2 script=$3
    shift 3
    local dir="$work/python/$name.$mode"
    mkdir -p "$dir"
    : >"$dir/rows.tsv"
    traced "$dir" env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_NO_CUDA_MEMORY_CACHING "$@" \
        "$py" "$gpu_dir/$script" "$dir/truth.json"
    local status=$? why
    if [ $status -ne 0 ] || [ ! -s "$dir/truth.json" ]; then
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" "exit 0 with truth" "$(exit_text $status "$dir/stderr")" FAIL >>"$dir/rows.tsv"
    elif ! why=$(report_for "$dir" "$(json_field "$dir/truth.json" pid)"); then
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" "a report" "$why" FAIL >>"$dir/rows.tsv"
    else
        "$tool_py" "$gpu_dir/check.py" python "$dir/truth.json" "$dir/report.json" "$mode" |
            sed "s/^/$name: /" >>"$dir/rows.tsv"
    fi
    say "  $name/$mode: $(cut -f5 "$dir/rows.tsv" | sort | uniq -c | tr -s ' \n' ' ')"
}

# Runs the queued "NAME MODE SCRIPT [ENV...]" lines, $jobs at a time, then collects their rows in
# queue order.
run_cases() {
    local line running=0
    local -a queue=("$@") fields
    for line in "${queue[@]}"; do
        read -r -a fields <<<"$line"
        python_case "${fields[@]}" &
        running=$((running + 1))
        if [ $running -ge "$jobs" ]; then
            wait -n
            running=$((running - 1))
        fi
    done
    wait
    for line in "${queue[@]}"; do
        read -r -a fields <<<"$line"
        cat "$work/python/${fields[0]}.${fields[1]}/rows.tsv" >>"$results"
    done
}

# python_can MODULE...: the modules import and see a GPU (not under the preload).
python_can() {
    local code="import sys; import $1"
    case "$1" in
    torch) code+="; sys.exit(0 if torch.cuda.is_available() else 3)" ;;
    jax) code+="; sys.exit(0 if jax.default_backend() == 'gpu' else 3)" ;;
    cupy) code+="; sys.exit(0 if cupy.cuda.runtime.getDeviceCount() > 0 else 3)" ;;
    esac
    timeout 120 env "${@:2}" "$py" -c "$code" >"$work/probe-$1.log" 2>&1
}

framework_scenarios() {
    local gpu=$1
    say "== 2. PyTorch scenarios; 3. CuPy and JAX"
    if [ "$gpu" = dry-run ]; then
        say "DRY RUN: torch is scripts/gpu/dryrun/site-packages/torch.py on the fake driver (the script and its checks are tested, not gpuleak on a GPU)"
        export PYTHONPATH="$gpu_dir/dryrun/site-packages${PYTHONPATH:+:$PYTHONPATH}"
        export LD_LIBRARY_PATH="$build/tests/fake:$LD_LIBRARY_PATH"
        export FAKECUDA_CAPACITY=$((4 << 30))
        label="dry-run "
    elif [ "$gpu" != yes ]; then
        row "torch scenarios" "${#torch_modes[@]} modes" "run on a GPU" "no GPU: skipped" SKIP
        row "cupy, jax scenarios" "-" "run on a GPU" "no GPU: skipped" SKIP
        return
    fi
    local queue=() mode env_line scenario
    if python_can torch; then
        have_torch=yes
        say "torch $("$py" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>/dev/null)"
        for mode in "${torch_modes[@]}"; do
            env_line=$(torch_mode_env "$mode") || { row "torch" "$mode" "a known mode" "unknown" FAIL; continue; }
            for scenario in leak clean_loop oom growing pinned_loader gradients; do
                queue+=("${label// /-}torch-$scenario $mode torch_$scenario.py $env_line")
            done
        done
    else
        row "torch scenarios" "${#torch_modes[@]} modes" "import torch, a GPU" "$(tail -n 1 "$work/probe-torch.log")" SKIP
    fi
    if python_can cupy; then
        queue+=("cupy-leak allocator=None cupy_leak.py")
    else
        row "cupy leak" "allocator=None" "import cupy, a GPU" "$(tail -n 1 "$work/probe-cupy.log")" SKIP
    fi
    if python_can jax XLA_PYTHON_CLIENT_ALLOCATOR=platform; then
        queue+=("jax-leak platform jax_leak.py XLA_PYTHON_CLIENT_ALLOCATOR=platform")
    else
        row "jax leak" "platform" "import jax, a GPU" "$(tail -n 1 "$work/probe-jax.log")" SKIP
    fi
    [ ${#queue[@]} -eq 0 ] || run_cases "${queue[@]}"
}

# --- 4. overhead -----------------------------------------------------------------------------

overhead() {
    local gpu=$1 mode env_line status
    say "== 4. overhead (one run at a time)"
    if [ "$gpu" = no ] || [ "$have_torch" != yes ]; then
        row "overhead" "${#torch_modes[@]} modes" "run on a GPU with torch" "skipped: no $([ "$gpu" = yes ] && echo torch || echo GPU)" SKIP
        return
    fi
    for mode in "${torch_modes[@]}"; do
        env_line=$(torch_mode_env "$mode") || continue
        local dir="$work/overhead/$mode"
        mkdir -p "$dir/plain" "$dir/traced"
        # shellcheck disable=SC2086 # env_line is one VAR=value word or none
        (cd "$dir/plain" && env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_NO_CUDA_MEMORY_CACHING $env_line \
            timeout -k 10 "$step_timeout" "$py" "$gpu_dir/torch_overhead.py" "$dir/plain.json" >stdout 2>stderr)
        status=$?
        if [ $status -ne 0 ]; then
            row "${label}overhead" "$mode" "plain run exits 0" "$(exit_text $status "$dir/plain/stderr")" FAIL
            continue
        fi
        # shellcheck disable=SC2086
        traced "$dir/traced" env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_NO_CUDA_MEMORY_CACHING $env_line \
            "$py" "$gpu_dir/torch_overhead.py" "$dir/traced.json"
        status=$?
        local why
        if [ $status -ne 0 ]; then
            row "${label}overhead" "$mode" "traced run exits 0" "$(exit_text $status "$dir/traced/stderr")" FAIL
        elif ! why=$(report_for "$dir/traced" "$(json_field "$dir/traced.json" pid)"); then
            row "${label}overhead" "$mode" "a report" "$why" FAIL
        else
            "$tool_py" "$gpu_dir/check.py" overhead "$dir/plain.json" "$dir/traced.json" \
                "$dir/traced/report.json" "$mode" | sed "s/^/$label/" >>"$results"
        fi
        say "  overhead/$mode: $(tail -n 2 "$results" | cut -f4 | head -1)"
    done
}

# --- results ---------------------------------------------------------------------------------

save_logs() {
    local out=${OUT:-}
    [ -n "$out" ] || return 0
    mkdir -p "$out"
    cp "$results" "$out/results.tsv"
    # Everything but binaries and traces, in one file (the device tool returns at most 8).
    tar -C "$work" --exclude='*.bin' --exclude='cuda/bin' --exclude='runtime-libs' -czf "$out/runs.tgz" . 2>/dev/null
    # Traces too, when they are small enough to come back.
    local traces
    traces=$(cd "$work" && find . -name 'trace.*.bin' | sort)
    if [ -n "$traces" ]; then
        (cd "$work" && echo "$traces" | tar -czf "$out/traces.tgz" -T -)
        if [ "$(du -k "$out/traces.tgz" | cut -f1)" -gt $((15 * 1024)) ]; then
            rm -f "$out/traces.tgz"
            say "traces.tgz over 15 MiB: not saved"
        fi
    fi
}

main() {
    local gpu=no
    say "started $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    if preflight; then
        if [ "$want_gpu" = dry-run ]; then
            gpu=dry-run
        elif gpu_present; then
            gpu=yes
            say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
        else
            say "no GPU ($([ "$want_gpu" = no ] && echo "--no-gpu" || echo "nvidia-smi lists none")): GPU checks are skipped"
        fi
        cuda_programs $gpu
        framework_scenarios $gpu
        overhead $gpu
    fi
    echo
    "$tool_py" "$gpu_dir/table.py" "$results"
}

main 2>&1 | tee "$work/gpu-validate.log"
status=${PIPESTATUS[0]}
save_logs
[ -n "${OUT:-}" ] && cp "$work/gpu-validate.log" "$OUT/gpu-validate.log"
if [ $keep_work = 0 ] && [ "$status" = 0 ]; then
    rm -rf "$work"
else
    echo "gpu-validate: work folder kept: $work"
fi
exit "$status"
