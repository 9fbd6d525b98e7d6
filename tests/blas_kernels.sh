#!/bin/sh
# blas_kernels.sh - the tests that pin BLAS results, run once per OpenBLAS
# kernel this CPU can run (OPENBLAS_CORETYPE: numpy's OpenBLAS and hpckit's
# programs alike - a user's choice wins over hpckit's), and odegen's scipy
# test with numpy's own SIMD code paths narrowed (NPY_DISABLE_CPU_FEATURES):
# the proof that what they assert does not depend on the kernel.
#  - odegen_scipy.sh: hpc-odegen against scipy (numpy's BLAS);
#  - matmul.sh: hpc-matmul's products against OpenBLAS's dgemm, every
#    grid, --verify;
#  - train_ranks.sh, train_resume.sh: hpc-train's losses at 1-4 ranks
#    against one rank's, and a resumed run bit for bit.
# Not part of make check (minutes per kernel); run it by hand:
#
#   tests/blas_kernels.sh [BUILD-DIR] [CORETYPE...]
#   TESTS="tests/matmul.sh" tests/blas_kernels.sh _build/mpich Haswell SkylakeX
#
# BUILD-DIR defaults to _build/mpich.  Kernels this CPU cannot execute
# (Illegal instruction, e.g. AMD's FMA4 kernels on newer CPUs) and names
# this OpenBLAS does not take are reported as such and skipped.
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/_build/mpich}" && pwd) || exit 2
[ $# -gt 0 ] && shift
kernels=${*:-Prescott Core2 Penryn Dunnington Nehalem Sandybridge Haswell SkylakeX Cooperlake Atom Barcelona Bobcat Bulldozer Piledriver Steamroller Excavator Zen}
TESTS=${TESTS:-tests/odegen_scipy.sh tests/matmul.sh tests/train_ranks.sh tests/train_resume.sh}
mm=$build/apps/matmul/hpc-matmul
npy_avx512="AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
fails=0

one() {   # one LABEL TESTS: make check of TESTS with the current environment
    if out=$(make -C "$build" check TESTS="$2" 2>&1); then
        echo "pass  $1"
    else
        echo "FAIL  $1"; echo "$out" | grep -E '^(FAIL|ERROR):' | sed 's/^/      /'
        fails=$((fails + 1))
    fi
}

for k in $kernels; do
    # the kernel hpc-matmul runs under it (its summary line), or why not
    got=$( (OPENBLAS_CORETYPE=$k "$mm" --gen 8,8,8) 2>&1 )
    rc=$?
    used=$(echo "$got" | sed -n 's/.*cpu, BLAS \([^)]*\)).*/\1/p')
    if [ -z "$used" ]; then
        why=$(echo "$got" | grep -m 1 -i 'illegal instruction' || echo "$got" | tail -n 1 | cut -c1-80)
        [ $rc -gt 128 ] && why="killed by signal $((rc - 128))${why:+: $why}"
        echo "skip  $k (this CPU cannot run it: $why)"
        continue
    fi
    if [ "$(echo "$used" | tr A-Z a-z)" != "$(echo "$k" | tr A-Z a-z)" ]; then
        echo "skip  $k (this OpenBLAS does not take the name: it runs $used)"
        continue
    fi
    OPENBLAS_CORETYPE=$k one "OPENBLAS_CORETYPE=$k" "$TESTS"
done
case " $TESTS " in
*odegen_scipy*)
    NPY_DISABLE_CPU_FEATURES=$npy_avx512 one "numpy without AVX-512 paths" tests/odegen_scipy.sh
    NPY_DISABLE_CPU_FEATURES="AVX2 FMA3 $npy_avx512" one "numpy without AVX2/FMA/AVX-512 paths" tests/odegen_scipy.sh ;;
esac
echo "blas_kernels: $fails failure(s)"
[ $fails -eq 0 ]
