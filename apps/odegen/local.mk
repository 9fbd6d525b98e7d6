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
# cuda.cu: not in SOURCES, see below
if HAVE_CUDA
# Automake derives no object from a .cu in a program's SOURCES (the suffix
# rule makes .lo), so the libtool object is linked by name.  The explicit
# rule beats the .cu.lo suffix rule: --fmad=false keeps every operation
# rounded as on the CPU (no fused multiply-add contraction).
apps_odegen_hpc_odegen_LDADD = apps/odegen/cuda.lo $(LDADD) $(CUDA_LDFLAGS) $(CUDA_LIBS)
EXTRA_apps_odegen_hpc_odegen_DEPENDENCIES = apps/odegen/cuda.lo
apps/odegen/cuda.lo: apps/odegen/cuda.cu apps/odegen/dp45.h apps/odegen/ode_rhs.h \
		apps/odegen/ode_sin.h apps/odegen/ode_prob.h apps/odegen/ode_cuda.h
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) \
		--fmad=false -c $(srcdir)/apps/odegen/cuda.cu
CLEANFILES += apps/odegen/cuda.lo apps/odegen/cuda.o apps/odegen/.libs/cuda.o
else
# a variable set under a conditional is empty, not defaulted, in the other branch
apps_odegen_hpc_odegen_LDADD = $(LDADD)
endif
EXTRA_DIST += apps/odegen/cuda.cu apps/odegen/bench.sh apps/odegen/readbench.sh

# The reading benchmark (apps/odegen/readbench.sh): a joined job array
# against a plain file, through MPI-IO and the serial driver.
noinst_PROGRAMS += apps/odegen/readbench
apps_odegen_readbench_SOURCES = apps/odegen/readbench.c
