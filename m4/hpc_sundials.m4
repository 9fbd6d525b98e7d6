# hpc_sundials.m4 - SUNDIALS (optional): CVODE's variable-order BDF is
# hpc-odegen's implicit method for stiff systems (--method BDF).  Debian:
# libsundials-dev (6.x: CVODE, the serial vector, the dense matrix and
# linear solver).  Without it, hpc-odegen builds with the explicit
# methods only and refuses --method BDF with one line naming the package.
AC_DEFUN([HPC_CHECK_SUNDIALS], [
  AC_ARG_VAR([SUNDIALS_LIBS], [linker flags for SUNDIALS (default: CVODE, serial vector, dense solver)])
  AS_IF([test -z "$SUNDIALS_LIBS"],
    [SUNDIALS_LIBS="-lsundials_cvode -lsundials_nvecserial -lsundials_sunmatrixdense -lsundials_sunlinsoldense"])
  hpc_save_LIBS=$LIBS
  LIBS="$SUNDIALS_LIBS $LIBS -lm"
  AC_MSG_CHECKING([for SUNDIALS 6 (CVODE)])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>]],
      [[SUNContext c; SUNContext_Create(NULL, &c); void *m = CVodeCreate(CV_BDF, c);
        N_Vector v = N_VNew_Serial(2, c); SUNMatrix A = SUNDenseMatrix(2, 2, c);
        SUNLinearSolver s = SUNLinSol_Dense(v, A, c);
        /* SUNDIALS 7 removed the error handler hpc-odegen sets: check it
           here so that 7 means "no BDF", not a build that fails */
        CVodeSetErrHandlerFn(m, NULL, NULL);
        SUNLinSolFree(s); SUNMatDestroy(A); N_VDestroy(v); CVodeFree(&m); SUNContext_Free(&c);]])],
    [hpc_have_sundials=yes], [hpc_have_sundials=no])
  AC_MSG_RESULT([$hpc_have_sundials])
  LIBS=$hpc_save_LIBS
  AS_IF([test $hpc_have_sundials = yes],
    [AC_DEFINE([HAVE_SUNDIALS], [1], [SUNDIALS CVODE: hpc-odegen's --method BDF])],
    [SUNDIALS_LIBS=""
     AC_MSG_NOTICE([no SUNDIALS 6: hpc-odegen without --method BDF (apt-get install libsundials-dev)])])
  AM_CONDITIONAL([HAVE_SUNDIALS], [test $hpc_have_sundials = yes])
  # ARKODE's ARKStep (--method ESDIRK): optional on its own, in the same
  # package; an ESDIRK table of Kennedy and Carpenter 2019 (SUNDIALS 6.3 on)
  hpc_have_arkode=no
  AS_IF([test $hpc_have_sundials = yes], [
    LIBS="-lsundials_arkode $SUNDIALS_LIBS $LIBS -lm"
    AC_MSG_CHECKING([for SUNDIALS ARKODE (ARKStep, ESDIRK436L2SA)])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <arkode/arkode_arkstep.h>
#include <nvector/nvector_serial.h>]],
        [[SUNContext c; SUNContext_Create(NULL, &c); N_Vector v = N_VNew_Serial(2, c);
          void *m = ARKStepCreate(NULL, NULL, 0.0, v, c);
          ARKStepSetTableNum(m, ARKODE_ESDIRK436L2SA_6_3_4, ARKODE_ERK_NONE);
          ARKStepSetErrHandlerFn(m, NULL, NULL); ARKStepSetInterpolantDegree(m, 3);
          ARKStepSetDeduceImplicitRhs(m, SUNTRUE); ARKStepSetPredictorMethod(m, 1);
          ARKStepFree(&m); N_VDestroy(v); SUNContext_Free(&c);]])],
      [hpc_have_arkode=yes])
    AC_MSG_RESULT([$hpc_have_arkode])
    LIBS=$hpc_save_LIBS])
  AS_IF([test $hpc_have_arkode = yes],
    [AC_DEFINE([HAVE_ARKODE], [1], [SUNDIALS ARKODE: hpc-odegen's --method ESDIRK])
     SUNDIALS_LIBS="-lsundials_arkode $SUNDIALS_LIBS"],
    [AS_IF([test $hpc_have_sundials = yes],
       [AC_MSG_NOTICE([no SUNDIALS ARKODE with ESDIRK436L2SA: hpc-odegen without --method ESDIRK])])])
  AC_SUBST([SUNDIALS_LIBS])
])
