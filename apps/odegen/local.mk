# apps/odegen/local.mk - hpc-odegen: parallel ODE ensemble generation.
bin_PROGRAMS += apps/odegen/hpc-odegen
apps_odegen_hpc_odegen_SOURCES = \
	apps/odegen/main.c \
	apps/odegen/options.c \
	apps/odegen/sysfile.c \
	apps/odegen/sha256.c \
	apps/odegen/sha256.h \
	apps/odegen/implicit.c \
	apps/odegen/output.c \
	apps/odegen/rows.c \
	apps/odegen/out_internal.h \
	apps/odegen/join.c \
	apps/odegen/odegen.h \
	apps/odegen/ode_cuda.h \
	apps/odegen/ode_texts.h
# The systems, in the form a user writes them (hpc_ode.h): installed as
# examples (PREFIX/share/hpckit/systems), compiled in as the built-ins by
# two small units each (builtin/: the engine compiled with the file
# exactly as --system-file compiles one at run time), and carried as
# text with the engine (odegen_texts.c: for that run-time compile, NVRTC,
# and the source recorded in every output).
ODEGEN_SYSTEMS = data/systems/decay-sin.c data/systems/lorenz.c data/systems/vanderpol.c \
	data/systems/lotka-volterra.c data/systems/kuramoto.c
ODEGEN_ENGINE = apps/odegen/hpc_ode.h apps/odegen/ode_prob.h apps/odegen/ode_sys.h apps/odegen/erk.h \
	apps/odegen/erk_tableaux.h apps/odegen/ode_events.h apps/odegen/sys_lanes.h apps/odegen/sys_host.h \
	apps/odegen/sys_params.h \
	apps/odegen/sys_cuda.h
ODEGEN_BUILTINS = \
	apps/odegen/builtin/decay_sin_lanes.c apps/odegen/builtin/decay_sin_host.c \
	apps/odegen/builtin/lorenz_lanes.c apps/odegen/builtin/lorenz_host.c \
	apps/odegen/builtin/vanderpol_lanes.c apps/odegen/builtin/vanderpol_host.c \
	apps/odegen/builtin/lotka_volterra_lanes.c apps/odegen/builtin/lotka_volterra_host.c \
	apps/odegen/builtin/kuramoto_lanes.c apps/odegen/builtin/kuramoto_host.c
# The systems' library: the built-ins, their texts and the engine, for
# hpc-odegen and the tests that look inside (tests/odegen.mk).
# (a plain archive: objects of the program, not of a module)
noinst_LIBRARIES += apps/odegen/libodesys.a
apps_odegen_libodesys_a_SOURCES = apps/odegen/systems.c $(ODEGEN_ENGINE) $(ODEGEN_BUILTINS)
nodist_apps_odegen_libodesys_a_SOURCES = apps/odegen/odegen_texts.c
apps_odegen_libodesys_a_CPPFLAGS = $(apps_odegen_hpc_odegen_CPPFLAGS)
apps_odegen_libodesys_a_CFLAGS = $(apps_odegen_hpc_odegen_CFLAGS)
apps/odegen/odegen_texts.c: $(top_srcdir)/build-aux/embed.sh $(ODEGEN_ENGINE:%=$(top_srcdir)/%) \
		$(ODEGEN_SYSTEMS:%=$(top_srcdir)/%)
	$(AM_V_GEN)$(MKDIR_P) apps/odegen && $(SHELL) $(top_srcdir)/build-aux/embed.sh $@ \
		$(ODEGEN_ENGINE:%=$(top_srcdir)/%) $(ODEGEN_SYSTEMS:%=$(top_srcdir)/%)
CLEANFILES += apps/odegen/odegen_texts.c
odesystemsdir = $(pkgdatadir)/systems
dist_odesystems_DATA = $(ODEGEN_SYSTEMS)
include_HEADERS += apps/odegen/hpc_ode.h
EXTRA_DIST += build-aux/embed.sh
apps_odegen_hpc_odegen_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/apps/odegen -I$(top_srcdir)/data/systems
# --device cuda: the GPU engine (cuda.cu) is a module of its own,
# PREFIX/lib/hpckit/hpc-odegen-cuda.so, opened by cuda_load.c only when
# asked for, so that hpc-odegen needs no CUDA runtime to start.
apps_odegen_hpc_odegen_SOURCES += apps/odegen/cuda_load.c
# the engine runs on the CPU and on the GPU and their step counts must
# match: no fused multiply-add contraction on either (GCC contracts by
# default in GNU C modes and on aarch64; NVRTC gets --fmad=false)
# (-Wno-psabi: the 8-lane hpc_real is a 64-byte vector passed to
# always-inlined functions, where GCC's note about its ABI means nothing)
apps_odegen_hpc_odegen_CFLAGS = $(AM_CFLAGS) -ffp-contract=off -Wno-psabi $(ODEGEN_VEC_CFLAGS)
apps_odegen_hpc_odegen_LDADD = apps/odegen/libodesys.a $(HPC_LDADD) $(SUNDIALS_LIBS) -ldl
if HAVE_CUDA
# Automake derives no object from a .cu outside a library's SOURCES, so
# the libtool object is linked by name.  The module holds the host side
# only (NVRTC and the CUDA runtime): the kernel is the system compiled
# at run time (sys_cuda.h, --fmad=false there).
pkglib_LTLIBRARIES += apps/odegen/hpc-odegen-cuda.la
apps_odegen_hpc_odegen_cuda_la_SOURCES =
apps_odegen_hpc_odegen_cuda_la_LIBADD = apps/odegen/cuda.lo $(CUDA_LIBS) -lnvrtc
apps_odegen_hpc_odegen_cuda_la_LDFLAGS = $(HPC_MODULE_LDFLAGS)
EXTRA_apps_odegen_hpc_odegen_cuda_la_DEPENDENCIES = apps/odegen/cuda.lo
apps/odegen/cuda.lo: apps/odegen/cuda.cu apps/odegen/ode_prob.h apps/odegen/ode_cuda.h
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) \
		-c $(srcdir)/apps/odegen/cuda.cu
CLEANFILES += apps/odegen/cuda.lo apps/odegen/cuda.o apps/odegen/.libs/cuda.o
endif
EXTRA_DIST += apps/odegen/cuda.cu apps/odegen/bench.sh apps/odegen/bench_stiff.sh apps/odegen/readbench.sh

# The reading benchmark (apps/odegen/readbench.sh): a joined job array
# against a plain file, through MPI-IO and the serial driver.
noinst_PROGRAMS += apps/odegen/readbench
apps_odegen_readbench_SOURCES = apps/odegen/readbench.c

# The yardstick for --method BDF (apps/odegen/bench.sh, METHOD=BDF): the
# same Robertson problem through CVODE called directly.
if HAVE_SUNDIALS
noinst_PROGRAMS += apps/odegen/cvode_direct
apps_odegen_cvode_direct_SOURCES = apps/odegen/cvode_direct.c
apps_odegen_cvode_direct_LDADD = $(HDF5_LIBS) $(SUNDIALS_LIBS) -lm
endif
