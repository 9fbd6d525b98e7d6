# hpc_cuda.m4 - optional CUDA runtime, nvcc and cuBLAS (UCX/hwloc style).
#
# --with-cuda[=DIR]: default "guess" looks in $CUDA_HOME or /usr/local/cuda;
# a guess that fails is a warning and a CPU-only build; an explicit request
# (yes or DIR) that fails stops configure.
AC_DEFUN([HPC_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
       [build the CUDA paths (nvcc, cudart, cuBLAS) from DIR @<:@default: look in CUDA_HOME or /usr/local/cuda@:>@])],
    [], [with_cuda=guess])
  AC_ARG_VAR([NVCC_ARCH], [nvcc code generation flags (default: sm_80 and sm_90, plus compute_90 PTX)])
  AC_ARG_VAR([NVCCFLAGS], [extra nvcc flags (e.g. -ccbin for another host compiler)])
  hpc_have_cuda=no
  AS_IF([test "x$with_cuda" != xno], [
    AS_CASE([$with_cuda],
      [guess|yes], [hpc_cuda_dir=${CUDA_HOME:-/usr/local/cuda}],
      [hpc_cuda_dir=$with_cuda])
    AC_MSG_CHECKING([for CUDA in $hpc_cuda_dir])
    hpc_cuda_why=""
    AS_IF([test ! -x "$hpc_cuda_dir/bin/nvcc"], [hpc_cuda_why="no $hpc_cuda_dir/bin/nvcc"],
          [test ! -f "$hpc_cuda_dir/include/cuda_runtime_api.h"], [hpc_cuda_why="no cuda_runtime_api.h"])
    hpc_cuda_libdir=$hpc_cuda_dir/lib64
    AS_IF([test ! -d "$hpc_cuda_libdir"], [hpc_cuda_libdir=$hpc_cuda_dir/lib])
    AS_IF([test -z "$hpc_cuda_why"], [
      hpc_save_CPPFLAGS=$CPPFLAGS; hpc_save_LIBS=$LIBS
      CPPFLAGS="$CPPFLAGS -I$hpc_cuda_dir/include"
      LIBS="-L$hpc_cuda_libdir -lcublas -lcudart $LIBS"
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>
#include <cublas_v2.h>]], [[int n; cublasHandle_t h; (void)h; return cudaGetDeviceCount(&n);]])],
        [], [hpc_cuda_why="cannot link cudart and cublas"])
      CPPFLAGS=$hpc_save_CPPFLAGS; LIBS=$hpc_save_LIBS])
    # nvcc with its host compiler, on a trivial kernel: an unsupported host
    # GCC (or a broken -ccbin in NVCCFLAGS) is one line here, not an error
    # deep in make
    AS_IF([test -z "$hpc_cuda_why"], [
      hpc_nvcc_arch=$NVCC_ARCH
      AS_IF([test -z "$hpc_nvcc_arch"], [hpc_nvcc_arch="-gencode=arch=compute_80,code=sm_80"])
      cat > conftest.cu <<HPC_EOF
__global__ void k(float *x) { x[[threadIdx.x]] *= 2.0f; }
int main(void) { k<<<1, 1>>>(0); return 0; }
HPC_EOF
      AS_IF([$hpc_cuda_dir/bin/nvcc $hpc_nvcc_arch $NVCCFLAGS -c conftest.cu -o conftest.o > conftest.nvcc 2>&1], [],
            [hpc_cuda_why="$hpc_cuda_dir/bin/nvcc cannot compile a trivial kernel: $(grep -m1 -i -e error -e unsupported conftest.nvcc || tail -n 1 conftest.nvcc)"])
      rm -f conftest.cu conftest.o conftest.nvcc])
    AS_IF([test -z "$hpc_cuda_why"], [
      AC_MSG_RESULT([yes])
      hpc_have_cuda=yes
      NVCC="$hpc_cuda_dir/bin/nvcc"
      CUDA_CPPFLAGS="-I$hpc_cuda_dir/include"
      CUDA_LDFLAGS="-L$hpc_cuda_libdir -Wl,-rpath,$hpc_cuda_libdir"
      # the runtime (and the C++ runtime nvcc's host code needs) only, and
      # only for the modules (PREFIX/lib/hpckit): cuBLAS is opened at run
      # time (hpc_dlsyms), never linked
      CUDA_LIBS="-lcudart -lstdc++"
      AS_IF([test -z "$NVCC_ARCH"],
            [NVCC_ARCH="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90"])
      AC_DEFINE([HPC_HAVE_CUDA], [1], [Define to 1 if built with CUDA])
    ], [
      AC_MSG_RESULT([no: $hpc_cuda_why])
      AS_IF([test "x$with_cuda" != xguess],
            [AC_MSG_ERROR([--with-cuda=$with_cuda requested but $hpc_cuda_why])],
            [AC_MSG_WARN([CUDA not found ($hpc_cuda_why): building for CPU only])])])
  ])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([hpc_have_cuda])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$hpc_have_cuda" = xyes])
])
