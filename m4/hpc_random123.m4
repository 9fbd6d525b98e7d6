# hpc_random123.m4 - Random123 (header-only counter-based RNGs).
AC_DEFUN([HPC_CHECK_RANDOM123], [
  AC_CHECK_HEADER([Random123/philox.h], [],
    [AC_MSG_ERROR([Random123 not found: apt-get install librandom123-dev])])
])
