#!/usr/bin/env bash
# Installs the Debian packages gpuleak builds and tests with; skips what is present.
# Sourced by setup.sh and test.sh, or run directly.
#
# The CUDA toolkit is optional and not installed here: the product needs none. The tests use one
# when CMake finds it (/usr/local/cuda, or nvcc on PATH): the fake CUDA libraries and everything run
# on them are compiled against its headers, tests/real_cuda needs its nvcc, runtime and cuBLAS.
# Without one CMake prints which tests it skips.
set -euo pipefail

gpuleak_packages=(cmake g++ make pkg-config libunwind-dev libdw-dev libelf-dev
                  libzstd-dev libcli11-dev nlohmann-json3-dev libgtest-dev python3 clang libclang-rt-14-dev
                  clang-format zlib1g-dev
                  chromium golang-go) # readers of the exports in tests/exports: the HTML report, pprof

gpuleak_install_deps() {
    local missing=()
    for p in "${gpuleak_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if ! command -v nvcc >/dev/null 2>&1 && [ ! -e /usr/local/cuda/include/cuda.h ]; then
        echo "gpuleak: no CUDA toolkit (optional): the tests built against its headers will be skipped" >&2
    fi
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    echo "gpuleak: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    gpuleak_install_deps
fi
