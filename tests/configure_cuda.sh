#!/bin/sh
# configure_cuda.sh - configure compiles a trivial kernel with the nvcc it
# found and that nvcc's host compiler (issue 34.10): a host compiler nvcc
# cannot use is one line at configure time, not an error deep in make.
# --with-cuda (an explicit request) must stop configure with that line;
# the default (a guess) must warn and build for the CPU.  Runs configure
# twice in a scratch folder (about 40 s): only in the MPICH build, and only
# where this build has CUDA.
. "$top_srcdir/tests/testlib.sh" configure-cuda
[ "${HAVE_CUDA_BUILD:-no}" = yes ] || { echo "SKIP: this build has no CUDA"; exit 77; }
[ "${HPC_MPI_FLAVOR:-}" = mpich ] || { echo "SKIP: run in the MPICH build only (configure is the same)"; exit 77; }
src=$(cd "$top_srcdir" && pwd)
cc=$(sed -n 's/^MPICC = //p' "$top_builddir/Makefile" | head -n 1)
# configure as a user runs it: not the harness's HDF5_LIBS or a make's flags
unset HDF5_LIBS HDF5_CFLAGS CC CFLAGS CPPFLAGS LDFLAGS LIBS MAKEFLAGS MFLAGS MAKELEVEL
cd "$T" || exit 99
MPICC=$cc "$src/configure" -q --with-cuda NVCCFLAGS="-ccbin /nonexistent/g++" > out 2> err
rc=$?
[ $rc != 0 ] || fail "--with-cuda with an unusable host compiler: configure succeeded"
grep -q "configure: error: --with-cuda=yes requested but .*nvcc cannot compile a trivial kernel: .*" err ||
    { cat err; fail "--with-cuda: configure does not say nvcc cannot compile a kernel"; }
[ "$(grep -c 'configure: error' err)" = 1 ] || { cat err; fail "more than one error line"; }
rm -rf ./*
MPICC=$cc "$src/configure" -q NVCCFLAGS="-ccbin /nonexistent/g++" > out 2> err ||
    { cat err; fail "the default (a guess) with an unusable host compiler: configure failed"; }
grep -q "WARNING: CUDA not found (.*nvcc cannot compile a trivial kernel" err ||
    { cat err; fail "the guess does not warn why CUDA is not used"; }
grep -q "^hpc_have_cuda = no" Makefile || fail "the guess still builds CUDA"
echo "configure_cuda: an unusable nvcc host compiler is one line at configure time"
