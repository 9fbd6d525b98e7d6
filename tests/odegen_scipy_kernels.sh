#!/bin/sh
# odegen_scipy_kernels.sh - run tests/odegen_scipy.sh once per OpenBLAS
# kernel that numpy can be forced onto (OPENBLAS_CORETYPE), and with
# numpy's own SIMD code paths narrowed (NPY_DISABLE_CPU_FEATURES): the
# proof that the scipy comparison asserts nothing that depends on the CPU.
# Not part of make check (a minute per kernel); run it by hand:
#
#   tests/odegen_scipy_kernels.sh [BUILD-DIR] [CORETYPE...]
#
# BUILD-DIR defaults to _build/mpich.  Kernels this CPU cannot execute
# (Illegal instruction, e.g. AMD's FMA4 kernels on newer CPUs) are
# reported as such and skipped.
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/_build/mpich}" && pwd) || exit 2
[ $# -gt 0 ] && shift
kernels=${*:-Prescott Core2 Penryn Dunnington Nehalem Sandybridge Haswell SkylakeX Cooperlake Atom Barcelona Bobcat Bulldozer Piledriver Steamroller Excavator Zen}
py=$(sed -n 's/^PYTHON_SCI = //p' "$build/Makefile")
[ -n "$py" ] || { echo "no PYTHON_SCI in $build/Makefile" >&2; exit 2; }
export top_srcdir=$top top_builddir=$build PYTHON_SCI=$py MPIEXEC_WRAP=$build/tests/mpiexec-wrap
npy_avx512="AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
fails=0

one() {   # one LABEL: run the test with the current environment
    if out=$(sh "$top/tests/odegen_scipy.sh" 2>&1); then
        echo "pass  $1"
    elif echo "$out" | grep -q 'Illegal instruction'; then
        echo "skip  $1: this CPU cannot run that kernel (Illegal instruction)"
    else
        echo "FAIL  $1"; echo "$out" | tail -5 | sed 's/^/      /'
        fails=$((fails + 1))
    fi
}

for k in $kernels; do
    got=$(OPENBLAS_VERBOSE=2 OPENBLAS_CORETYPE=$k "$py" -c 'import numpy as n; n.dot(n.ones((9,9)), n.ones(9))' 2>&1)
    case $got in
    *"Core: "*) ;;
    *) echo "skip  $k (this CPU cannot run it: ${got:-crashed})"; continue ;;
    esac
    used=$(echo "$got" | sed -n 's/.*Core: //p' | tail -1)
    export OPENBLAS_CORETYPE=$k
    one "OPENBLAS_CORETYPE=$k (OpenBLAS runs: $used)"
    unset OPENBLAS_CORETYPE
done
NPY_DISABLE_CPU_FEATURES=$npy_avx512 one "numpy without AVX-512 paths"
NPY_DISABLE_CPU_FEATURES="AVX2 FMA3 $npy_avx512" one "numpy without AVX2/FMA/AVX-512 paths"
echo "odegen_scipy_kernels: $fails failure(s)"
[ $fails -eq 0 ]
