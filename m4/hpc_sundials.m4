# hpc_sundials.m4 - SUNDIALS (optional): CVODE's BDF and ARKODE's SDIRK
# are hpc-odegen's implicit methods (--method BDF, SDIRK).  Debian:
# libsundials-dev (6.x: CVODE, ARKODE, the serial vector, the dense
# matrix and linear solver).  Without it, those methods are refused with
# one line.
AC_DEFUN([HPC_CHECK_SUNDIALS], [
  AC_ARG_VAR([SUNDIALS_LIBS], [linker flags for SUNDIALS (default: CVODE, ARKODE, serial vector, dense solver)])
  AS_IF([test -z "$SUNDIALS_LIBS"],
    [SUNDIALS_LIBS="-lsundials_cvode -lsundials_arkode -lsundials_nvecserial -lsundials_sunmatrixdense -lsundials_sunlinsoldense"])
  hpc_save_LIBS=$LIBS
  LIBS="$SUNDIALS_LIBS $LIBS -lm"
  AC_MSG_CHECKING([for SUNDIALS 6 (CVODE, ARKODE)])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cvode/cvode.h>
#include <arkode/arkode_arkstep.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>]],
      [[SUNContext c; SUNContext_Create(NULL, &c); void *m = CVodeCreate(CV_BDF, c);
        (void)ARKStepSetTableNum; CVodeFree(&m); SUNContext_Free(&c);]])],
    [hpc_have_sundials=yes], [hpc_have_sundials=no])
  AC_MSG_RESULT([$hpc_have_sundials])
  LIBS=$hpc_save_LIBS
  AS_IF([test $hpc_have_sundials = yes],
    [AC_DEFINE([HAVE_SUNDIALS], [1], [SUNDIALS: hpc-odegen's implicit methods])],
    [SUNDIALS_LIBS=""
     AC_MSG_NOTICE([no SUNDIALS: hpc-odegen without BDF and SDIRK (apt-get install libsundials-dev)])])
  AM_CONDITIONAL([HAVE_SUNDIALS], [test $hpc_have_sundials = yes])
  AC_SUBST([SUNDIALS_LIBS])
])
