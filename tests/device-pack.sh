#!/bin/sh
# device-pack.sh - a folder to copy to a GPU machine that has only the
# NVIDIA driver: this build, the sources its tests read, and every shared
# library they load from this machine, for tests/device-check.sh.
#
#   tests/device-pack.sh [--link] [--no-cuda-libs] BUILD OUT
#
# OUT/build   the build tree (without object files), as configured
# OUT/src     the source files the tests read (tests/, data/, ...)
# OUT/lib     every library ldd finds for the build's programs, libraries,
#             modules and tests, the launcher and the HDF5 tools, besides
#             the C library's own and the driver's (libcuda, libnvidia-*),
#             which the GPU machine has: MPI, HDF5, OpenBLAS, UCX (and its
#             plugins), the CUDA runtime, NCCL, and cuBLAS (opened at run
#             time, so named here, not found by ldd)
# OUT/bin     the MPI launcher (MPICH's hydra: mpiexec, hydra_pmi_proxy) and
#             h5diff, h5dump
# OUT/pack.env  what was packed, from where (device-check.sh reads it)
#
# --link: symbolic links to the libraries and tools instead of copies (to
# test the pack on this machine; copy it with cp -rL to move it).
# --no-cuda-libs: leave the CUDA runtime, NCCL and cuBLAS out (the GPU
# machine has them; cuBLAS alone is over 500 MiB).
# The GPU machine needs a C library no older than this one's (glibc).
# Exit 0, or 2 (bad arguments) or 1 (something the pack needs is missing).
set -u
link=0 cudalibs=1
while [ $# -gt 2 ]; do
    case $1 in
    --link) link=1 ;;
    --no-cuda-libs) cudalibs=0 ;;
    *) echo "device-pack.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ $# = 2 ] || { echo "usage: device-pack.sh [--link] [--no-cuda-libs] BUILD OUT" >&2; exit 2; }
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "device-pack.sh: no build folder '$1'" >&2; exit 2; }
OUT=$2
[ -f "$BUILD/Makefile" ] && [ -x "$BUILD/apps/info/hpc-info" ] ||
    { echo "device-pack.sh: $BUILD is not a built hpckit tree (no Makefile or apps/info/hpc-info)" >&2; exit 2; }
[ ! -e "$OUT" ] || [ -z "$(ls -A "$OUT" 2>/dev/null)" ] ||
    { echo "device-pack.sh: $OUT exists and is not empty" >&2; exit 2; }
die() { echo "device-pack.sh: $*" >&2; exit 1; }
# the test programs the check runs: built now if they are not (make check
# TESTS= builds them and runs none)
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$BUILD" -s check TESTS= > "${TMPDIR:-/tmp}/device-pack.$$.log" 2>&1; then
    tail -n 5 "${TMPDIR:-/tmp}/device-pack.$$.log" >&2
    rm -f "${TMPDIR:-/tmp}/device-pack.$$.log"
    die "cannot build the test programs in $BUILD (make check TESTS=)"
fi
rm -f "${TMPDIR:-/tmp}/device-pack.$$.log"
mkv() { sed -n "s/^$1 = //p" "$BUILD/Makefile" | head -n 1; }
SRC=$(cd "$BUILD" && cd "$(mkv srcdir)" && pwd) || die "the sources of $BUILD are gone"
mkdir -p "$OUT/build" "$OUT/src" "$OUT/lib" "$OUT/bin" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)

put() {   # put FILE DIR: a copy (or link) of FILE in DIR, once
    [ -e "$2/$(basename "$1")" ] && return 0
    if [ "$link" = 1 ]; then ln -s "$(realpath "$1")" "$2/$(basename "$1")"; else cp -L "$1" "$2/"; fi ||
        die "cannot put $1 in $2"
}

# the build tree, objects left out; the sources the tests read
(cd "$BUILD" && tar cf - --exclude='*.o' --exclude='*.lo' --exclude='*.a' --exclude='*.log' --exclude='*.trs' .) |
    (cd "$OUT/build" && tar xf -) || die "cannot copy $BUILD"
if [ -d "$SRC/.git" ] || [ -f "$SRC/.git" ]; then
    (cd "$SRC" && git ls-files -z | xargs -0 tar cf -) | (cd "$OUT/src" && tar xf -) || die "cannot copy $SRC"
else
    (cd "$SRC" && tar cf - --exclude='./_build' --exclude='./build*' .) | (cd "$OUT/src" && tar xf -) ||
        die "cannot copy $SRC"
fi

# the libraries: what the C library and the driver provide stays behind
skip='^\(libc\|libm\|libdl\|libpthread\|librt\|libresolv\|libutil\|ld-linux[^ ]*\|linux-vdso\|libcuda\|libnvidia-[^ ]*\)\.so'
nocuda='^\(libcudart\|libnccl\|libcublas\|libcublasLt\)\.so'
libs_of() {   # the paths ldd resolves for the ELF files given
    for f in "$@"; do ldd "$f" 2>/dev/null; done | sed -n 's/^[[:space:]]*\([^ ]*\) => \(\/[^ ]*\) (.*/\1 \2/p' |
        grep -v "$skip" | sort -u
}
is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }
elves=$(find "$OUT/build" -type f -perm -u+x -o -type f -name '*.so*' | while read -r f; do is_elf "$f" && echo "$f"; done)
[ -n "$elves" ] || die "no programs in $OUT/build"

# tools: the launcher (MPICH: hydra), h5diff and h5dump
flavor=$(mkv HPC_MPI_FLAVOR)
mpiexec=$(mkv MPIEXEC)
tools=
if [ "$flavor" = mpich ]; then
    hydra=$(realpath "$mpiexec" 2>/dev/null)
    [ -x "$hydra" ] || die "no MPI launcher $mpiexec"
    proxy=$(dirname "$hydra")/hydra_pmi_proxy
    [ -x "$proxy" ] || proxy=$(command -v hydra_pmi_proxy) || die "no hydra_pmi_proxy beside $hydra"
    put "$hydra" "$OUT/bin"
    put "$proxy" "$OUT/bin"
    ln -sf "$(basename "$hydra")" "$OUT/bin/mpiexec"
    tools="$hydra $proxy"
else
    echo "device-pack.sh: note: $flavor's launcher is not packed: the GPU machine needs $flavor installed" >&2
fi
h5dump=$(mkv H5DUMP)
for t in "$h5dump" "$(dirname "${h5dump:-/usr/bin/h5dump}")/h5diff"; do
    [ -x "$t" ] && put "$t" "$OUT/bin" && tools="$tools $t"
done

n=0
for pass in 1 2; do
    # pass 2: the libraries' own, and what is opened at run time
    extra=
    if [ "$pass" = 2 ]; then
        # cuBLAS, by the soname the modules ask for (hpc_dlsyms)
        cub=$(strings "$BUILD"/apps/train/.libs/hpc-train-cuda.so 2>/dev/null | grep -o '^libcublas\.so\.[0-9]*$' | head -n 1)
        if [ -n "$cub" ] && [ "$cudalibs" = 1 ]; then
            cubp=$(ldconfig -p 2>/dev/null | sed -n "s/^[[:space:]]*$cub (.*) => //p" | head -n 1)
            for d in $(readelf -d "$BUILD/libhpc/.libs/libhpc-cuda.so" 2>/dev/null | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p' | tr ':' ' '); do
                [ -z "$cubp" ] && [ -e "$d/$cub" ] && cubp=$d/$cub
            done
            [ -n "$cubp" ] || die "$cub (the modules open it at run time) not found"
            extra=$cubp
            put "$cubp" "$OUT/lib"
        fi
        extra="$extra $(ls "$OUT"/lib/* 2>/dev/null)"
    fi
    libs_of $elves $tools $extra > "$OUT/libs.$pass"
    while read -r name path; do
        case $path in "$OUT"/*|"$BUILD"/*) continue ;; esac
        # libhpc comes from the build, never from an install on this machine
        case $name in libhpc*) continue ;; esac
        [ "$cudalibs" = 0 ] && echo "$name" | grep -q "$nocuda" && continue
        put "$path" "$OUT/lib"
        n=$((n + 1))
    done < "$OUT/libs.$pass"
    rm -f "$OUT/libs.$pass"
done
# UCX opens its transports from ucx/ beside libucs
ucs=$(ls "$OUT"/lib/libucs.so.* 2>/dev/null | head -n 1)
if [ -n "$ucs" ]; then
    d=$(dirname "$(realpath "$ucs")")/ucx
    if [ -d "$d" ]; then
        mkdir -p "$OUT/lib/ucx"
        for p in "$d"/*.so*; do put "$p" "$OUT/lib/ucx"; done
        libs_of "$OUT"/lib/ucx/* | while read -r name path; do
            case $path in "$OUT"/*|"$BUILD"/*) continue ;; esac
            [ "$cudalibs" = 0 ] && echo "$name" | grep -q "$nocuda" && continue
            put "$path" "$OUT/lib"
        done
    fi
fi
# the tests' own copy of this script's partner, and what was packed
cp "$SRC/tests/device-check.sh" "$OUT/device-check.sh" || die "no tests/device-check.sh in $SRC"
{
    echo "# device-pack.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
    echo "PACK_FROM_BUILD=$BUILD"
    echo "PACK_FROM_SRC=$SRC"
    echo "PACK_MPI_FLAVOR=$flavor"
    echo "PACK_CUDA_LIBS=$cudalibs"
    echo "PACK_LINKED=$link"
    echo "PACK_GLIBC=$(ldd --version 2>/dev/null | head -n 1 | sed 's/.* //')"
} > "$OUT/pack.env"
echo "device-pack.sh: $OUT: the build, the sources, $(ls "$OUT/lib" | wc -l) libraries$( [ "$cudalibs" = 0 ] && echo ' (no CUDA ones)'), $(ls "$OUT/bin" | wc -l) tools; $(du -shL "$OUT" 2>/dev/null | cut -f1)"
echo "device-pack.sh: on the GPU machine: sh $(basename "$OUT")/device-check.sh $(basename "$OUT")"
