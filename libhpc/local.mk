# libhpc/local.mk - the shared library, its headers and pkg-config file.
# Layers (docs/architecture.md): the core (hpc.h), parallel HDF5
# (hpc_h5.h), the app kit (hpc_app.h, libhpc/app/); the collectives
# (hpc_coll.h) have their own fragment.  hpc_testing.h is not installed.
lib_LTLIBRARIES += libhpc/libhpc.la
include_HEADERS += libhpc/hpc.h libhpc/hpc_rng.h libhpc/hpc_coll.h libhpc/hpc_h5.h libhpc/hpc_app.h libhpc/hpc_dl.h

libhpc_libhpc_la_SOURCES = \
	libhpc/version.c \
	libhpc/err.c \
	libhpc/log.c \
	libhpc/launch.c \
	libhpc/gpu.c \
	libhpc/affinity.c \
	libhpc/env.c \
	libhpc/node.c \
	libhpc/timer.c \
	libhpc/parse.c \
	libhpc/dl.c \
	libhpc/h5.c \
	libhpc/h5_vds.c \
	libhpc/h5_reserve.c \
	libhpc/lock.c \
	libhpc/internal.h \
	libhpc/hpc_testing.h \
	libhpc/app/app_internal.h \
	libhpc/app/app.c \
	libhpc/app/opts.c \
	libhpc/app/settings.c \
	libhpc/app/stop.c \
	libhpc/app/progress.c \
	libhpc/app/text.c \
	libhpc/app/run.c \
	libhpc/app/workq.c \
	libhpc/app/output.c \
	libhpc/app/grid.c \
	libhpc/app/ckpt.c \
	libhpc/app/same.c \
	libhpc/app/file.c \
	libhpc/app/mem.c
# hidden by default: only what the public headers mark HPC_EXPORT is exported
libhpc_libhpc_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
# where --help finds the guides: configure's docdir, and the same folder
# relative to an installed program's (for a prefix moved as a whole)
HPC_BIN_TO_DOC = $(shell realpath -m --relative-to=$(bindir) $(docdir) 2>/dev/null || echo ../share/doc/$(PACKAGE))
libhpc_libhpc_la_CPPFLAGS = $(AM_CPPFLAGS) -DHPC_DOCDIR='"$(docdir)"' -DHPC_BIN_TO_DOC='"$(HPC_BIN_TO_DOC)"'
libhpc_libhpc_la_LDFLAGS = -version-info $(HPC_LT_VERSION) -no-undefined $(CUDA_LDFLAGS) $(NCCL_LDFLAGS)
libhpc_libhpc_la_LIBADD = $(HDF5_LIBS) $(BLAS_LIBS) $(NCCL_LIBS) $(CUDA_LIBS) -lm

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libhpc/libhpc.pc
EXTRA_DIST += libhpc/libhpc.pc.in
