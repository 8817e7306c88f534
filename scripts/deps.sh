#!/usr/bin/env bash
# Installs the Debian packages gpuleak builds and tests with; skips what is present.
# Sourced by setup.sh and test.sh, or run directly.
set -euo pipefail

gpuleak_packages=(cmake g++ make pkg-config libunwind-dev libspdlog-dev libfmt-dev libdw-dev libelf-dev
                  libzstd-dev libcli11-dev nlohmann-json3-dev libgtest-dev python3 clang libclang-rt-14-dev
                  clang-format zlib1g-dev
                  chromium golang-go) # readers of the exports in tests/exports: the HTML report, pprof

gpuleak_install_deps() {
    local missing=()
    for p in "${gpuleak_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
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
