#!/usr/bin/env bash
# Copies the shared libraries that gpuleak's binaries need at run time from THIS machine into
# .gpu-runtime/, so a GPU machine whose image lacks them (elfutils, zstd, libunwind: no -dev or
# runtime packages there, and no package registry) can run the build/ carried to it:
#
#   .gpu-runtime/lib/    everything ldd names for build/bin/gpuleak-report and build/lib/libgpuleak.so,
#                        plus libunwind.so.8 (which the preload dlopens) and what it needs (liblzma)
#   .gpu-runtime/core/   libstdc++ and libgcc_s: used only where the machine's own are too old
#
# glibc itself (libc, libm, ld.so, ...) is never copied: it must be the machine's own. The folder is
# ignored by git; carry it with build/ (64 MiB together at most). gpu-validate.sh picks it up.
#
# usage: scripts/gpu/pack-runtime-libs.sh [BUILD_DIR] [DEST]   (defaults: build, .gpu-runtime)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
dest=${2:-$root/.gpu-runtime}

binaries=("$build/bin/gpuleak-report" "$build/lib/libgpuleak.so")
for b in "${binaries[@]}"; do
    [ -f "$b" ] || { echo "pack-runtime-libs: $b is missing: build first" >&2; exit 1; }
done

# The libraries the preload opens itself, by name, at run time (not in its DT_NEEDED).
unwind=$(ldconfig -p | awk '$1 == "libunwind.so.8" && /x86-64/ { print $NF; exit }')
[ -n "$unwind" ] || { echo "pack-runtime-libs: libunwind.so.8 not found here (apt-get install libunwind8)" >&2; exit 1; }

# Resolved paths of every library ldd names; "not found" here means this machine cannot run them either.
resolve() {
    ldd "$@" | awk '
        /not found/ { print "MISSING " $1; next }
        $2 == "=>" && $3 ~ /^\// { print $3 }'
}

mapfile -t paths < <(resolve "${binaries[@]}" "$unwind"; echo "$unwind")
if printf '%s\n' "${paths[@]}" | grep -q '^MISSING'; then
    printf '%s\n' "${paths[@]}" | grep '^MISSING' >&2
    exit 1
fi

rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/core"
for p in $(printf '%s\n' "${paths[@]}" | sort -u); do
    name=$(basename "$p")
    case "$name" in
    ld-linux* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.*) continue ;;
    libstdc++.so.* | libgcc_s.so.*) cp -L "$p" "$dest/core/$name" ;;
    *) cp -L "$p" "$dest/lib/$name" ;;
    esac
done
# Where it came from, for whoever reads a failing run's log.
{
    echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(grep -m1 PRETTY_NAME /etc/os-release | cut -d= -f2), $(ldd --version | head -1)"
    (cd "$dest" && ls -l lib core)
} >"$dest/MANIFEST"

size_kib=$(du -sk "$dest" | cut -f1)
build_kib=$(du -sk "$build" | cut -f1)
echo "pack-runtime-libs: $(find "$dest" -name '*.so*' | wc -l) libraries in $dest: $((size_kib / 1024)) MiB" \
     "($((size_kib)) KiB); with $build: $(((size_kib + build_kib) / 1024)) MiB of the 64 MiB carry limit"
ls "$dest/lib" "$dest/core"
if [ $((size_kib + build_kib)) -gt $((60 * 1024)) ]; then
    echo "pack-runtime-libs: WARNING: close to the 64 MiB carry limit" >&2
fi
