# hpc_openblas.m4 - OpenBLAS with its CBLAS interface.
AC_DEFUN([HPC_CHECK_OPENBLAS], [
  AS_IF([test -z "$BLAS_CFLAGS$BLAS_LIBS"],
        [PKG_CHECK_MODULES([BLAS], [openblas], [],
           [BLAS_CFLAGS=""; BLAS_LIBS="-lopenblas"])])
  hpc_save_CPPFLAGS=$CPPFLAGS; hpc_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $BLAS_CFLAGS"; LIBS="$BLAS_LIBS $LIBS"
  AC_MSG_CHECKING([for OpenBLAS cblas_dgemm])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cblas.h>]],
      [[double a = 1, b = 1, c = 0;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &a, 1, &b, 1, 0.0, &c, 1);
        openblas_set_num_threads(1);]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([OpenBLAS (CBLAS) not found: apt-get install libopenblas-dev])])
  CPPFLAGS=$hpc_save_CPPFLAGS; LIBS=$hpc_save_LIBS
])
