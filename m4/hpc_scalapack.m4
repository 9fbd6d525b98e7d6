# hpc_scalapack.m4 - ScaLAPACK for the MPI in use (optional): the pdgemm
# baseline of hpc-matmul's benchmark.  Debian ships one per MPI:
# libscalapack-mpich-dev, libscalapack-openmpi-dev.
AC_DEFUN([HPC_CHECK_SCALAPACK], [
  AC_ARG_VAR([SCALAPACK_LIBS], [linker flags for ScaLAPACK (default: -lscalapack-FLAVOUR)])
  AS_IF([test -z "$SCALAPACK_LIBS"], [SCALAPACK_LIBS="-lscalapack-$HPC_MPI_FLAVOR"])
  hpc_save_LIBS=$LIBS
  LIBS="$SCALAPACK_LIBS $BLAS_LIBS $LIBS"
  AC_MSG_CHECKING([for ScaLAPACK pdgemm ($SCALAPACK_LIBS)])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[void pdgemm_(void);]], [[pdgemm_();]])],
    [hpc_have_scalapack=yes], [hpc_have_scalapack=no])
  AC_MSG_RESULT([$hpc_have_scalapack])
  LIBS=$hpc_save_LIBS
  AS_IF([test $hpc_have_scalapack = no],
    [SCALAPACK_LIBS=""
     AC_MSG_NOTICE([no ScaLAPACK: the matmul benchmark runs without pdgemm (apt-get install libscalapack-$HPC_MPI_FLAVOR-dev)])])
  AM_CONDITIONAL([HAVE_SCALAPACK], [test $hpc_have_scalapack = yes])
  AC_SUBST([SCALAPACK_LIBS])
])
