# hpc_nccl.m4 - optional NCCL, for device-buffer collectives.  Needs CUDA.
AC_DEFUN([HPC_CHECK_NCCL], [
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@],
       [use NCCL from DIR @<:@default: look beside CUDA and in the system paths@:>@])],
    [], [with_nccl=guess])
  hpc_have_nccl=no
  NCCL_CPPFLAGS=""; NCCL_LDFLAGS=""; NCCL_LIBS=""
  AS_IF([test "x$with_nccl" != xno], [
    hpc_nccl_why=""
    AS_IF([test "x$hpc_have_cuda" != xyes], [hpc_nccl_why="CUDA is not enabled"], [
      AS_CASE([$with_nccl],
        [guess|yes], [AS_IF([test -f "$hpc_cuda_dir/include/nccl.h"],
                            [NCCL_CPPFLAGS="-I$hpc_cuda_dir/include"; NCCL_LDFLAGS="-L$hpc_cuda_libdir"])],
        [NCCL_CPPFLAGS="-I$with_nccl/include"
         hpc_nccl_libdir=$with_nccl/lib64
         AS_IF([test ! -d "$hpc_nccl_libdir"], [hpc_nccl_libdir=$with_nccl/lib])
         NCCL_LDFLAGS="-L$hpc_nccl_libdir -Wl,-rpath,$hpc_nccl_libdir"])
      hpc_save_CPPFLAGS=$CPPFLAGS; hpc_save_LIBS=$LIBS
      CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS $NCCL_CPPFLAGS"
      LIBS="$NCCL_LDFLAGS $CUDA_LDFLAGS -lnccl -lcudart $LIBS"
      AC_MSG_CHECKING([for NCCL])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>]], [[int v; return ncclGetVersion(&v);]])],
        [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no]); hpc_nccl_why="cannot link nccl"])
      CPPFLAGS=$hpc_save_CPPFLAGS; LIBS=$hpc_save_LIBS])
    AS_IF([test -z "$hpc_nccl_why"], [
      hpc_have_nccl=yes
      NCCL_LIBS="-lnccl"
      AC_DEFINE([HPC_HAVE_NCCL], [1], [Define to 1 if built with NCCL])
    ], [
      AS_IF([test "x$with_nccl" != xguess],
            [AC_MSG_ERROR([--with-nccl=$with_nccl requested but $hpc_nccl_why])],
            [AC_MSG_WARN([NCCL not used: $hpc_nccl_why])])])
  ])
  AC_SUBST([NCCL_CPPFLAGS])
  AC_SUBST([NCCL_LDFLAGS])
  AC_SUBST([NCCL_LIBS])
  AC_SUBST([hpc_have_nccl])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$hpc_have_nccl" = xyes])
])
