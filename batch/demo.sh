#!/bin/sh
# demo.sh - build hpckit and run the main job on this machine.
#
#   batch/demo.sh [NRANKS]     (default 2 local ranks)
#
# Installs missing Debian packages (as root), builds with MPICH in
# _build/mpich, then shows how the ranks were placed (hpc-info).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
np=${1:-2}
sh batch/deps.sh mpich
[ -x configure ] || ./autogen.sh >/dev/null
b=_build/mpich
mkdir -p "$b"
[ -f "$b/Makefile" ] || (cd "$b" && MPICC=${MPICC:-mpicc.mpich} "$top/configure" -q)
make -C "$b" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
mpiexec=$(sed -n 's/^MPIEXEC = //p' "$b/Makefile")
echo "=== hpc-info on $np local ranks ($mpiexec -n $np)"
exec $mpiexec -n "$np" "$b/apps/info/hpc-info"
