# hpc_odegen.m4 - what hpc-odegen's engine needs of the compiler.
# ODEGEN_VEC_CFLAGS: on x86-64 with GCC 12 or later, -mmove-max=256
# -mstore-max=256, so that a store of the engine's 8-lane vectors (64
# bytes; AVX2 registers hold 32) goes out as two 32-byte stores, not as
# four 16-byte ones through the stack: about 8% of the classic example's
# time.  The values are the same bits either way.  hpc-odegen probes the
# run-time compiler for the same flags (apps/odegen/sysfile.c).
AC_DEFUN([HPC_CHECK_ODEGEN_FLAGS], [
  AC_MSG_CHECKING([whether $CC takes -mmove-max=256 -mstore-max=256])
  hpc_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS -mmove-max=256 -mstore-max=256 -Werror"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[]], [[]])],
    [ODEGEN_VEC_CFLAGS="-mmove-max=256 -mstore-max=256"; AC_MSG_RESULT([yes])],
    [ODEGEN_VEC_CFLAGS=""; AC_MSG_RESULT([no])])
  CFLAGS=$hpc_save_CFLAGS
  AC_SUBST([ODEGEN_VEC_CFLAGS])
])
