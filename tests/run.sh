#!/bin/sh
# run.sh - the one command that builds hpckit and runs every test.
#
#   tests/run.sh              MPICH build in _build/mpich, make check
#   tests/run.sh openmpi      the same with Open MPI in _build/openmpi
#   tests/run.sh mpich openmpi  both, one after the other
#   tests/run.sh --distcheck mpich openmpi
#                             MPICH's tests run by make distcheck (the release
#                             tarball built, tested, installed) - what CI runs
#
# Installs missing Debian packages first (as root), then autogen, configure,
# make and make check.  On failure, prints the logs of the failed tests.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
target=check
if [ "$1" = --distcheck ]; then
    target=distcheck
    shift
fi
mpis=${*:-mpich}
sh batch/deps.sh $mpis
[ -x configure ] || ./autogen.sh >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
for mpi in $mpis; do
    case $mpi in
    mpich)   cc=${MPICC:-mpicc.mpich} ;;
    openmpi) cc=mpicc.openmpi ;;
    *) echo "run.sh: unknown MPI '$mpi'" >&2; exit 2 ;;
    esac
    b=_build/$mpi
    mkdir -p "$b"
    echo "=== $mpi: configure, build, make $([ "$mpi" = mpich ] && echo $target || echo check) in $b"
    [ -f "$b/Makefile" ] || (cd "$b" && MPICC=$cc "$top/configure" -q --enable-werror)
    t=check
    [ "$mpi" = mpich ] && t=$target
    # distcheck builds from the tarball itself; a plain check builds here first
    [ $t = check ] && make -C "$b" -j"$jobs" >/dev/null
    if ! make -C "$b" -j"$jobs" $t; then
        for log in $(grep -l -E '^:test-result: (FAIL|ERROR)' $(find "$b" -name '*.trs') 2>/dev/null); do
            echo "----- ${log%.trs}.log"
            tail -n 40 "${log%.trs}.log"
        done
        exit 1
    fi
done
