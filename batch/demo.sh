#!/bin/sh
# demo.sh - build hpckit and run the main job on this machine.
#
#   batch/demo.sh [NRANKS [RUNDIR]]   (default 2 local ranks, ${TMPDIR:-/tmp}/hpckit-demo)
#
# Installs missing Debian packages (as root), builds with MPICH in
# _build/mpich, shows how the ranks were placed (hpc-info), then generates
# the classic ODE dataset into RUNDIR (never into the source tree).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
np=${1:-2}
run=${2:-${TMPDIR:-/tmp}/hpckit-demo}
sh batch/deps.sh mpich
[ -x configure ] || ./autogen.sh >/dev/null
b=_build/mpich
mkdir -p "$b"
[ -f "$b/Makefile" ] || (cd "$b" && MPICC=${MPICC:-mpicc.mpich} "$top/configure" -q)
make -C "$b" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
mpiexec=$(sed -n 's/^MPIEXEC = //p' "$b/Makefile")
echo "=== hpc-info on $np local ranks ($mpiexec -n $np)"
$mpiexec -n "$np" "$b/apps/info/hpc-info"
mkdir -p "$run"
echo "=== hpc-odegen: the classic example into $run/ode.h5"
$mpiexec -n "$np" "$b/apps/odegen/hpc-odegen" -n 10000 --out "$run/ode.h5" --force
