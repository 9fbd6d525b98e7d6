# tests/local.mk - the test harness and the foundation's tests.
#
# MPI tests are listed as DIR/NAME.npN (MPICH test-list style: name + rank
# count).  NAME.npN is a stamp made from the program NAME; the harness runs
# it through tests/mpiexec-wrap, which launches NAME on N ranks with the
# launcher chosen at configure time.  Plain programs and .sh scripts run
# directly.  Exit 77 = skipped (says why).
TEST_EXTENSIONS = .np1 .np2 .np3 .np4 .np5 .np7 .sh
NP1_LOG_COMPILER = $(top_builddir)/tests/mpiexec-wrap
NP2_LOG_COMPILER = $(top_builddir)/tests/mpiexec-wrap
NP3_LOG_COMPILER = $(top_builddir)/tests/mpiexec-wrap
NP4_LOG_COMPILER = $(top_builddir)/tests/mpiexec-wrap
NP5_LOG_COMPILER = $(top_builddir)/tests/mpiexec-wrap
NP7_LOG_COMPILER = $(top_builddir)/tests/mpiexec-wrap
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(top_srcdir)'; top_builddir='$(top_builddir)'; \
	MPIEXEC_WRAP='$(abs_top_builddir)/tests/mpiexec-wrap'; \
	PYTHON_SCI='$(PYTHON_SCI)'; H5DUMP='$(H5DUMP)'; GNUPLOT='$(GNUPLOT)'; \
	HPC_MPI_FLAVOR='$(HPC_MPI_FLAVOR)'; \
	export top_srcdir top_builddir MPIEXEC_WRAP PYTHON_SCI H5DUMP GNUPLOT HPC_MPI_FLAVOR;

# Stamps: one per (program, rank count).
%.np1: %$(EXEEXT) ; @echo 1 > $@
%.np2: %$(EXEEXT) ; @echo 2 > $@
%.np3: %$(EXEEXT) ; @echo 3 > $@
%.np4: %$(EXEEXT) ; @echo 4 > $@
%.np5: %$(EXEEXT) ; @echo 5 > $@
%.np7: %$(EXEEXT) ; @echo 7 > $@
CLEANFILES += tests/*.np[0-9] apps/*/*.np[0-9]
DISTCLEANFILES += tests/mpiexec-wrap
EXTRA_DIST += tests/mpiexec-wrap.in tests/testlib.h

# Unit tests: one process, no launcher needed (singleton MPI init).
check_PROGRAMS += tests/test_rng tests/test_err tests/test_launch tests/test_gpu_bind
TESTS += tests/test_rng tests/test_err tests/test_launch tests/test_gpu_bind

# MPI tests at 1..4 ranks.
check_PROGRAMS += tests/test_env tests/test_h5
TESTS += tests/test_env.np1 tests/test_env.np2 tests/test_env.np3 tests/test_env.np4 \
	 tests/test_h5.np1 tests/test_h5.np2 tests/test_h5.np3 tests/test_h5.np4

# Program-level tests (scripts).
dist_check_SCRIPTS += tests/info.sh tests/gpu.sh
TESTS += tests/info.sh tests/gpu.sh

