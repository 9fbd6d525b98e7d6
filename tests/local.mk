# tests/local.mk - the test harness and the foundation's tests.
#
# MPI tests are listed as DIR/NAME-npN.mpi (MPICH test-list style: name +
# rank count).  NAME-npN.mpi is a stamp made from the program NAME; the
# harness runs it through tests/mpiexec-wrap, which launches NAME on N ranks
# with the launcher chosen at configure time (logs: DIR/NAME-npN.log).
# Plain programs and .sh scripts run directly.  Exit 77 = skipped.
TEST_EXTENSIONS = .mpi .sh
MPI_LOG_COMPILER = $(top_builddir)/tests/mpiexec-wrap
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	. '$(top_srcdir)/tests/testenv.sh'; \
	top_srcdir='$(top_srcdir)'; top_builddir='$(top_builddir)'; \
	MPIEXEC_WRAP='$(abs_top_builddir)/tests/mpiexec-wrap'; \
	PYTHON_SCI='$(PYTHON_SCI)'; H5DUMP='$(H5DUMP)'; GNUPLOT='$(GNUPLOT)'; \
	HPC_MPI_FLAVOR='$(HPC_MPI_FLAVOR)'; MPIEXEC='$(MPIEXEC)'; HELP2MAN='$(HELP2MAN)'; \
	HPC_MODULE_DIR='$(abs_top_builddir)/$(HPC_MODULE_LINKS)'; HAVE_CUDA_BUILD='$(hpc_have_cuda)'; \
	HDF5_LIBS='$(HDF5_LIBS)'; \
	export top_srcdir top_builddir MPIEXEC_WRAP PYTHON_SCI H5DUMP GNUPLOT HPC_MPI_FLAVOR MPIEXEC HELP2MAN \
	       HPC_MODULE_DIR HAVE_CUDA_BUILD HDF5_LIBS;

# Stamps: one per (program, rank count); kept (.PRECIOUS) so make does not
# delete them as intermediates.
%-np1.mpi: %$(EXEEXT) ; @echo 1 > $@
%-np2.mpi: %$(EXEEXT) ; @echo 2 > $@
%-np3.mpi: %$(EXEEXT) ; @echo 3 > $@
%-np4.mpi: %$(EXEEXT) ; @echo 4 > $@
%-np5.mpi: %$(EXEEXT) ; @echo 5 > $@
%-np7.mpi: %$(EXEEXT) ; @echo 7 > $@
.PRECIOUS: %.mpi
CLEANFILES += tests/*.mpi apps/*/*.mpi
DISTCLEANFILES += tests/mpiexec-wrap
EXTRA_DIST += tests/mpiexec-wrap.in tests/testlib.h tests/testlib.sh tests/testenv.sh tests/programs_lib.sh

# Every multi-node path on a cluster in a box (tests/cluster/: Linux
# namespaces, a bridge, Slurm and munge; skips without root): one cluster
# for the whole run, listed first because it is the longest test.
dist_check_SCRIPTS += tests/cluster_box.sh
TESTS += tests/cluster_box.sh
EXTRA_DIST += tests/cluster/cluster.sh tests/cluster/lib.sh tests/cluster/cases_jobs.sh \
	tests/cluster/cases_apps.sh tests/cluster/cases_batch.sh tests/cluster/cases_faults.sh tests/cluster/bench.sh

# Unit tests: one process, no launcher needed (singleton MPI init).
# Those that look inside (hpc_testing.h, test_hooks.h, gpu_ops.h) link
# libhpc's objects from the convenience libraries, not the installed
# libraries, which export no test hook.  (The harness points them at the
# build tree's modules, HPC_MODULE_DIR: statically linked, they cannot
# find them beside libhpc-core.)
check_PROGRAMS += tests/test_rng tests/test_err tests/test_launch tests/test_gpu_bind tests/test_dl
TESTS += tests/test_rng tests/test_err tests/test_launch tests/test_gpu_bind tests/test_dl
tests_test_launch_LDADD = $(HPC_TESTING_LDADD)
tests_test_gpu_bind_LDADD = $(HPC_TESTING_LDADD)
# The OpenBLAS kernel hpckit chooses from the CPU's flags (planted sets,
# every set, this CPU's against /proc/cpuinfo)
check_PROGRAMS += tests/test_blas_pick
TESTS += tests/test_blas_pick
dist_check_SCRIPTS += tests/blas_kernel.sh
TESTS += tests/blas_kernel.sh
# by hand: the tests that pin BLAS results under every kernel this CPU runs
EXTRA_DIST += tests/blas_kernels.sh
# the README's test command (its block names it; a tarball runs it too)
EXTRA_DIST += tests/run.sh
tests_test_blas_pick_LDADD = $(HPC_TESTING_LDADD)
# What libhpc makes of the CUDA runtime's statuses (a fake runtime), and
# the device tests' skip-or-fail verdict
check_PROGRAMS += tests/test_gpu_status
TESTS += tests/test_gpu_status
tests_test_gpu_status_LDADD = $(HPC_TESTING_LDADD)

# The RNG in a CUDA kernel against the CPU (skips without a GPU).
check_PROGRAMS += tests/test_rng_cuda
TESTS += tests/test_rng_cuda
EXTRA_DIST += tests/rng_cuda.cu
tests_test_rng_cuda_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
if HAVE_CUDA
tests_test_rng_cuda_LDADD = tests/rng_cuda.lo $(LDADD) $(CUDA_LDFLAGS) $(CUDA_LIBS)
EXTRA_tests_test_rng_cuda_DEPENDENCIES = tests/rng_cuda.lo
tests/rng_cuda.lo: tests/rng_cuda.cu libhpc/hpc_rng.h
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) -c $(srcdir)/tests/rng_cuda.cu
CLEANFILES += tests/rng_cuda.lo tests/rng_cuda.o tests/.libs/rng_cuda.o
else
tests_test_rng_cuda_LDADD = $(LDADD)
endif

# OpenBLAS's threads set by hpc_init, without libhpc linking OpenBLAS
check_PROGRAMS += tests/test_blas_threads
tests_test_blas_threads_LDADD = $(LDADD) $(BLAS_LIBS)
TESTS += tests/test_blas_threads-np1.mpi tests/test_blas_threads-np2.mpi

# MPI tests at 1..4 ranks.  test_h5_vds: a file of virtual datasets (a
# joined job array) read through every reader, missing sources refused.
check_PROGRAMS += tests/test_env tests/test_h5 tests/test_h5_vds tests/test_app
tests_test_env_LDADD = $(HPC_TESTING_LDADD)
TESTS += tests/test_env-np1.mpi tests/test_env-np2.mpi tests/test_env-np3.mpi tests/test_env-np4.mpi \
	 tests/test_h5-np1.mpi tests/test_h5-np2.mpi tests/test_h5-np3.mpi tests/test_h5-np4.mpi \
	 tests/test_h5_vds-np1.mpi tests/test_h5_vds-np2.mpi tests/test_h5_vds-np3.mpi tests/test_h5_vds-np4.mpi \
	 tests/test_app-np1.mpi tests/test_app-np2.mpi tests/test_app-np3.mpi tests/test_app-np4.mpi

# The app kit through a program made of it alone; every program's answer
# to stale launcher variables, bad settings and bad flags; the exports.
check_PROGRAMS += tests/app_demo
dist_check_SCRIPTS += tests/app_kit.sh tests/programs_env.sh tests/symbols.sh tests/settings.sh
TESTS += tests/app_kit.sh tests/programs_env.sh tests/symbols.sh tests/settings.sh
# The layers (core, coll, h5, app, programs; the drop-in, the modules)
# from the objects' symbols, and that a call upward is caught
dist_check_SCRIPTS += tests/layers.sh
TESTS += tests/layers.sh
# One error convention: no "char *err, size_t len" buffers in libhpc/, apps/
dist_check_SCRIPTS += tests/conventions.sh
TESTS += tests/conventions.sh
# What is defined once stays so: a collective's wrappers only from its
# row of libhpc/coll/colls.h, the programs only from programs.list
dist_check_SCRIPTS += tests/one_place.sh
TESTS += tests/one_place.sh

# hpc_finalize's two ends of MPI (MPI_Finalize; the quiet end that avoids
# MPICH's hang across nodes) leave open HDF5 and stdio files complete
check_PROGRAMS += tests/finalize_prog
dist_check_SCRIPTS += tests/finalize.sh
TESTS += tests/finalize.sh

# Program-level tests (scripts).
dist_check_SCRIPTS += tests/info.sh tests/gpu.sh
# hpc-mpiexec, and the other MPI's launcher refused on each singleton
dist_check_SCRIPTS += tests/launcher.sh
TESTS += tests/launcher.sh
# Load anywhere (issue 20): cpu_node.sh runs the build as a CPU node's
# install without the GPU modules, and with them but the CUDA runtime and
# NCCL hidden from the loader; needed.sh asserts every library's and
# program's NEEDED list and RUNPATH (readelf)
dist_check_SCRIPTS += tests/cpu_node.sh tests/needed.sh
TESTS += tests/cpu_node.sh tests/needed.sh
# configure_cuda.sh: an nvcc that cannot compile a kernel is one line at
# configure time (runs configure twice: MPICH build only)
dist_check_SCRIPTS += tests/configure_cuda.sh
TESTS += tests/configure_cuda.sh
# The GPU validation in one command (issue 20): tests/device-check.sh BUILD
# (a build tree, or the folder tests/device-pack.sh makes for a machine with
# only the NVIDIA driver); device_pack.sh runs both here: the pack is
# complete, and without a GPU the check ends with 77 after running every
# step as far as it can
EXTRA_DIST += tests/device-check.sh tests/device-pack.sh
dist_check_SCRIPTS += tests/device_pack.sh
TESTS += tests/device_pack.sh
# install.sh: make install DESTDIR, the prefix moved, then used with no
# LD_LIBRARY_PATH: RUNPATHs, a user program through pkg-config, man pages,
# guides, the modulefile
dist_check_SCRIPTS += tests/install.sh
TESTS += tests/install.sh
EXTRA_DIST += tests/install_user.c
TESTS += tests/info.sh tests/gpu.sh

# The batch scripts outside Slurm: local ranks bound to cores (no
# hpc-info warning), the progress interval set for logs, bad arguments
# one line and exit 2; every installed script clean under shellcheck.
dist_check_SCRIPTS += tests/batch_local.sh tests/shellcheck.sh
TESTS += tests/batch_local.sh tests/shellcheck.sh

# The README's first command, twice in a row (issue 28.1)
dist_check_SCRIPTS += tests/demo_twice.sh
TESTS += tests/demo_twice.sh

# A disk that fills up (a small tmpfs; skips unless root): hpc-train's
# checkpoint, metrics.csv and loss.png, hpc-odegen's output mid-run.
dist_check_SCRIPTS += tests/full_disk.sh
TESTS += tests/full_disk.sh

# What the programs share at run time, through hpc-train, hpc-odegen and
# hpc-matmul on 2 ranks: progress lines in a log (HPC_PROGRESS, each
# program's fields, log lines without a doubled rank prefix); Ctrl-C and
# SIGTERM (agreed stop, exit 75, resume bit for bit; a second Ctrl-C ends
# the job).
dist_check_SCRIPTS += tests/progress.sh tests/interrupt.sh
TESTS += tests/progress.sh tests/interrupt.sh

# Slurm end to end: a private slurmctld + slurmd started by the test.
dist_check_SCRIPTS += tests/slurm_info.sh tests/slurm_odegen.sh tests/slurm_batch.sh
TESTS += tests/slurm_info.sh tests/slurm_odegen.sh tests/slurm_batch.sh
# slurm_workflow.sh: the README's workflow from an install in the user's
# folder: odegen job array -> join -> train (equal to an un-sharded run) ->
# the Python module -> --init-from a PyTorch model; and through pipeline.sh
dist_check_SCRIPTS += tests/slurm_workflow.sh
TESTS += tests/slurm_workflow.sh
EXTRA_DIST += tests/slurm/cluster.sh

# docs_run.sh: every command block of README.md and docs/*.md, as
# written, from an install (tests/docs_run.py extracts and runs them)
dist_check_SCRIPTS += tests/docs_run.sh
TESTS += tests/docs_run.sh
EXTRA_DIST += tests/docs_run.py tests/install_lock.sh

#
# make install relinks libhpc.so and libhpc-mpi.so inside the build tree,
# and libtool moves .libs/libhpc.so.2.0.0 aside while it does: a test that
# starts a program of the build in that moment cannot load it (seen under
# make -j2: "libhpc.so.2: cannot open shared object file").  The tests
# that run make install (of the libraries) therefore start after every
# other test has ended; their installs take turns (tests/install_lock.sh)
# and their programs run from the install, so they may run side by side.
HPC_INSTALLING_LOGS = tests/install.log tests/slurm_workflow.log tests/docs_run.log
tests/install.log tests/docs_run.log: $(filter-out $(HPC_INSTALLING_LOGS),$(TEST_LOGS))
tests/slurm_workflow.log: tests/install.log
CLEANFILES += .install.lock
