# libhpc/local.mk - the shared library, its headers and pkg-config file.
lib_LTLIBRARIES += libhpc/libhpc.la
include_HEADERS += libhpc/hpc.h libhpc/hpc_rng.h libhpc/hpc_coll.h libhpc/hpc_h5.h

libhpc_libhpc_la_SOURCES = \
	libhpc/version.c \
	libhpc/err.c \
	libhpc/log.c \
	libhpc/launch.c \
	libhpc/gpu.c \
	libhpc/affinity.c \
	libhpc/env.c \
	libhpc/timer.c \
	libhpc/progress.c \
	libhpc/util.c \
	libhpc/h5.c \
	libhpc/internal.h
# hidden by default: only what the public headers mark HPC_EXPORT is exported
libhpc_libhpc_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libhpc_libhpc_la_LDFLAGS = -version-info $(HPC_LT_VERSION) -no-undefined $(CUDA_LDFLAGS) $(NCCL_LDFLAGS)
libhpc_libhpc_la_LIBADD = $(HDF5_LIBS) $(BLAS_LIBS) $(NCCL_LIBS) $(CUDA_LIBS) -lm

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libhpc/libhpc.pc
EXTRA_DIST += libhpc/libhpc.pc.in
