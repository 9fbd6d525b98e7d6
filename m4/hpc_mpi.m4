# hpc_mpi.m4 - find the MPI C compiler and launcher.
#
# HPC_PROG_MPICC (before AC_PROG_CC): honour MPICC; otherwise prefer MPICH's
# wrapper (Debian makes Open MPI the default "mpicc"), then plain mpicc.
# CC becomes the MPI wrapper so every object sees mpi.h.
AC_DEFUN([HPC_PROG_MPICC], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper (default: mpicc.mpich, then mpicc)])
  AC_ARG_VAR([MPIEXEC], [MPI launcher matching MPICC (default: derived from MPICC)])
  AS_IF([test -z "$MPICC"], [AC_PATH_PROGS([MPICC], [mpicc.mpich mpicc])])
  AS_IF([test -z "$MPICC"],
        [AC_MSG_ERROR([no MPI C compiler found: apt-get install mpich libmpich-dev (or set MPICC)])])
  CC="$MPICC"
])

# HPC_CHECK_MPI (after AC_PROG_CC): mpich | openmpi | other, the launcher,
# and TESTMPIEXEC, the test launcher line with an NP placeholder.
AC_DEFUN([HPC_CHECK_MPI], [
  AC_CACHE_CHECK([which MPI library $CC uses], [hpc_cv_mpi_flavor], [
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef MPICH_VERSION
# error not mpich
#endif]])], [hpc_cv_mpi_flavor=mpich], [
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef OMPI_MAJOR_VERSION
# error not ompi
#endif]])], [hpc_cv_mpi_flavor=openmpi], [
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]])],
                      [hpc_cv_mpi_flavor=other],
                      [AC_MSG_ERROR([$CC cannot compile an MPI program: apt-get install libmpich-dev])])])])])
  HPC_MPI_FLAVOR=$hpc_cv_mpi_flavor
  AC_SUBST([HPC_MPI_FLAVOR])

  AS_IF([test -z "$MPIEXEC"], [
    AS_CASE([$HPC_MPI_FLAVOR],
      [mpich],   [AC_PATH_PROGS([MPIEXEC], [mpiexec.mpich mpiexec.hydra mpiexec])],
      [openmpi], [AC_PATH_PROGS([MPIEXEC], [mpiexec.openmpi mpirun.openmpi mpiexec])],
                 [AC_PATH_PROGS([MPIEXEC], [mpiexec mpirun])])])
  AS_IF([test -z "$MPIEXEC"],
        [AC_MSG_ERROR([no MPI launcher found for $HPC_MPI_FLAVOR: apt-get install mpich (or set MPIEXEC)])])

  # Open MPI refuses more ranks than cores unless told, and adds a banner
  # of its own to a failing job's stderr unless quiet (-q).
  AC_ARG_VAR([TESTMPIEXEC], [launcher line for tests; NP is replaced by the rank count])
  AS_IF([test -z "$TESTMPIEXEC"], [
    AS_CASE([$HPC_MPI_FLAVOR],
      [openmpi], [TESTMPIEXEC="$MPIEXEC -q --oversubscribe -n NP"],
                 [TESTMPIEXEC="$MPIEXEC -n NP"])])
  AC_DEFINE_UNQUOTED([HPC_MPIEXEC], ["$MPIEXEC"], [MPI launcher found at configure time])
])

# HPC_MPI_PKGCONFIG (after HPC_CHECK_MPI and PKG_PROG_PKG_CONFIG): what
# libhpc.pc needs so that `cc $(pkg-config --cflags --libs libhpc)`
# compiles and links an MPI program without the wrapper: the MPI's own
# pkg-config module where it ships one (mpich, ompi-c), else the flags
# its wrapper reports.
AC_DEFUN([HPC_MPI_PKGCONFIG], [
  HPC_PC_MPI_REQUIRES=""; HPC_PC_MPI_CFLAGS=""; HPC_PC_MPI_LIBS=""
  AS_CASE([$HPC_MPI_FLAVOR], [mpich], [hpc_mpi_pc=mpich], [openmpi], [hpc_mpi_pc=ompi-c], [hpc_mpi_pc=])
  AC_MSG_CHECKING([how libhpc.pc names MPI])
  AS_IF([test -n "$hpc_mpi_pc" && test -n "$PKG_CONFIG" && $PKG_CONFIG --exists "$hpc_mpi_pc"],
        [HPC_PC_MPI_REQUIRES=$hpc_mpi_pc; AC_MSG_RESULT([Requires: $hpc_mpi_pc])],
        [AS_CASE([$HPC_MPI_FLAVOR],
           [openmpi], [HPC_PC_MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null`
                       HPC_PC_MPI_LIBS=`$MPICC --showme:link 2>/dev/null`],
                      [HPC_PC_MPI_CFLAGS=`$MPICC -compile_info 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep '^-I' | tr '\n' ' '`
                       HPC_PC_MPI_LIBS=`$MPICC -link_info 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep -E '^-(L|l|Wl)' | tr '\n' ' '`])
         AC_MSG_RESULT([the wrapper's flags: $HPC_PC_MPI_CFLAGS $HPC_PC_MPI_LIBS])])
  AC_SUBST([HPC_PC_MPI_REQUIRES])
  AC_SUBST([HPC_PC_MPI_CFLAGS])
  AC_SUBST([HPC_PC_MPI_LIBS])
])
