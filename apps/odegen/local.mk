# apps/odegen/local.mk - hpc-odegen: parallel ODE ensemble generation.
bin_PROGRAMS += apps/odegen/hpc-odegen
apps_odegen_hpc_odegen_SOURCES = \
	apps/odegen/main.c \
	apps/odegen/options.c \
	apps/odegen/systems.c \
	apps/odegen/solver.c \
	apps/odegen/output.c \
	apps/odegen/rows.c \
	apps/odegen/out_internal.h \
	apps/odegen/join.c \
	apps/odegen/odegen.h \
	apps/odegen/ode_cuda.h \
	apps/odegen/ode_prob.h \
	apps/odegen/ode_rhs.h \
	apps/odegen/ode_sin.h \
	apps/odegen/dp45.h
# --device cuda: the GPU engine (cuda.cu) is a module of its own,
# PREFIX/lib/hpckit/hpc-odegen-cuda.so, opened by cuda_load.c only when
# asked for, so that hpc-odegen needs no CUDA runtime to start.
apps_odegen_hpc_odegen_SOURCES += apps/odegen/cuda_load.c
# the solver runs on the CPU and in the module and their step counts
# must match: no fused multiply-add contraction on either (GCC contracts
# by default in GNU C modes and on aarch64; nvcc gets --fmad=false)
apps_odegen_hpc_odegen_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
if HAVE_CUDA
# Automake derives no object from a .cu outside a library's SOURCES, so
# the libtool object is linked by name.  The explicit rule beats the
# .cu.lo suffix rule: --fmad=false keeps every operation rounded as on
# the CPU (no fused multiply-add contraction).
pkglib_LTLIBRARIES += apps/odegen/hpc-odegen-cuda.la
apps_odegen_hpc_odegen_cuda_la_SOURCES =
apps_odegen_hpc_odegen_cuda_la_LIBADD = apps/odegen/cuda.lo $(CUDA_LIBS)
apps_odegen_hpc_odegen_cuda_la_LDFLAGS = $(HPC_MODULE_LDFLAGS)
EXTRA_apps_odegen_hpc_odegen_cuda_la_DEPENDENCIES = apps/odegen/cuda.lo
apps/odegen/cuda.lo: apps/odegen/cuda.cu apps/odegen/dp45.h apps/odegen/ode_rhs.h \
		apps/odegen/ode_sin.h apps/odegen/ode_prob.h apps/odegen/ode_cuda.h
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) \
		--fmad=false -c $(srcdir)/apps/odegen/cuda.cu
CLEANFILES += apps/odegen/cuda.lo apps/odegen/cuda.o apps/odegen/.libs/cuda.o
endif
EXTRA_DIST += apps/odegen/cuda.cu apps/odegen/bench.sh apps/odegen/readbench.sh

# The reading benchmark (apps/odegen/readbench.sh): a joined job array
# against a plain file, through MPI-IO and the serial driver.
noinst_PROGRAMS += apps/odegen/readbench
apps_odegen_readbench_SOURCES = apps/odegen/readbench.c
