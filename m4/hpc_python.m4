# hpc_python.m4 - a Python with numpy, scipy and h5py for reference tests.
# Optional: tests that need it skip (exit 77) without it.
AC_DEFUN([HPC_CHECK_PYTHON_SCI], [
  AC_ARG_VAR([PYTHON_SCI], [Python with numpy, scipy and h5py, for reference tests])
  AS_IF([test -z "$PYTHON_SCI"], [
    AC_MSG_CHECKING([for a Python with numpy, scipy and h5py])
    for hpc_py in /usr/bin/python3 python3; do
      if $hpc_py -c 'import numpy, scipy.integrate, h5py' >/dev/null 2>&1; then
        PYTHON_SCI=$hpc_py; break
      fi
    done
    AS_IF([test -n "$PYTHON_SCI"], [AC_MSG_RESULT([$PYTHON_SCI])],
          [AC_MSG_RESULT([no (reference tests will skip): apt-get install python3-scipy python3-h5py])])])
  AC_PATH_PROGS([GNUPLOT], [gnuplot], [])
  AS_IF([test -n "$GNUPLOT"],
        [AC_DEFINE_UNQUOTED([HPC_GNUPLOT], ["$GNUPLOT"], [gnuplot for plots])])
])
