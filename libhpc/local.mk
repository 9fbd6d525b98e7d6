# libhpc/local.mk - libhpc: its layers, the libraries made of them, its
# headers and pkg-config file.
#
# The layers (docs/architecture.md; tests/layers.sh checks them from the
# objects' symbols) and where each goes:
#   core  hpc.h: start-up, environment, errors, log, parsing, timers,
#         modules, file locks (libhpc/*.c)          } libhpc-core.so: MPI
#   coll  hpc_coll.h: collectives (coll/local.mk)   } and libc only
#   app   hpc_app.h: the app kit without HDF5       } libhpc.so: the same,
#         (app/*.c but those below)                 } on libhpc-core
#   h5    hpc_h5.h: parallel HDF5 (h5*.c)           } libhpc-h5.a: + HDF5,
#   apph5 hpc_app_h5.h: the app kit's outputs,      } on libhpc and
#         checkpoints, file kinds (app/output.c,    } libhpc-core
#         writer.c, ckpt.c, json.c, schema*.c, check*.c)
# libhpc-h5 is a static library (PIC objects): a program that writes
# HDF5 carries it, so that libhpc.so needs no HDF5 (hpc-info and
# hpc-collbench load none) while every program still needs only
# libhpc.so and libhpc-core.so, as before (docs/architecture.md).
#   the GPU module PREFIX/lib/hpckit/libhpc-cuda.so: every CUDA runtime
#         and NCCL call of libhpc (cuda/module.c, coll/cuda.cu), opened
#         at run time (gpu_ops.h) - libhpc needs no CUDA to start
# Each layer's objects are built once, into a convenience library: the
# installed libraries are made of them, and the tests that look inside
# (test hooks, never exported) link them statically (libtesting.la).
# hpc_testing.h and gpu_ops.h are not installed.
include_HEADERS += libhpc/hpc.h libhpc/hpc_rng.h libhpc/hpc_coll.h libhpc/hpc_h5.h libhpc/hpc_app.h libhpc/hpc_app_h5.h libhpc/hpc_dl.h
noinst_LTLIBRARIES += libhpc/libcore.la libhpc/libapp.la libhpc/libio.la libhpc/libtesting.la

# hidden by default: only what the public headers mark HPC_EXPORT is exported
HPC_LIB_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
# where libhpc-core finds its modules: configure's pkglibdir relative to
# its libdir ("hpckit"), so that a moved prefix finds them too
HPC_LIB_TO_MODULES = $(shell realpath -m --relative-to=$(libdir) $(pkglibdir) 2>/dev/null || echo hpckit)

libhpc_libcore_la_SOURCES = \
	libhpc/version.c \
	libhpc/err.c \
	libhpc/log.c \
	libhpc/launch.c \
	libhpc/gpu.c \
	libhpc/gpu_policy.c \
	libhpc/gpu_ops.c \
	libhpc/affinity.c \
	libhpc/env.c \
	libhpc/finalize.c \
	libhpc/node.c \
	libhpc/node_split.c \
	libhpc/timer.c \
	libhpc/parse.c \
	libhpc/settings.c \
	libhpc/settings_warn.c \
	libhpc/blas.c \
	libhpc/watch.c \
	libhpc/dl.c \
	libhpc/lock.c \
	libhpc/internal.h \
	libhpc/gpu_ops.h \
	libhpc/hpc_testing.h
libhpc_libcore_la_CFLAGS = $(HPC_LIB_CFLAGS)
libhpc_libcore_la_CPPFLAGS = $(AM_CPPFLAGS) -DHPC_LIB_TO_MODULES='"$(HPC_LIB_TO_MODULES)"'

# the app kit without HDF5 (compiled without HDF5's headers on the path)
libhpc_libapp_la_SOURCES = \
	libhpc/app/app_internal.h \
	libhpc/app/app.c \
	libhpc/app/exit.c \
	libhpc/app/opts.c \
	libhpc/app/settings_check.c \
	libhpc/app/stop.c \
	libhpc/app/progress.c \
	libhpc/app/text.c \
	libhpc/app/run.c \
	libhpc/app/workq.c \
	libhpc/app/grid.c \
	libhpc/app/same.c \
	libhpc/app/file.c \
	libhpc/app/mem.c \
	libhpc/app/gpu_module.c \
	libhpc/app/blas_restart.c
libhpc_libapp_la_CFLAGS = $(HPC_LIB_CFLAGS)
# where --help finds the guides: configure's docdir, and the same folder
# relative to an installed program's (for a prefix moved as a whole)
HPC_BIN_TO_DOC = $(shell realpath -m --relative-to=$(bindir) $(docdir) 2>/dev/null || echo ../share/doc/$(PACKAGE))
libhpc_libapp_la_CPPFLAGS = $(HPC_APP_CPPFLAGS) -DHPC_DOCDIR='"$(docdir)"' -DHPC_BIN_TO_DOC='"$(HPC_BIN_TO_DOC)"'

# parallel HDF5 and the app kit's HDF5 part
libhpc_libio_la_SOURCES = \
	libhpc/h5_internal.h \
	libhpc/h5.c \
	libhpc/h5_dataset.c \
	libhpc/h5_rows.c \
	libhpc/h5_attr.c \
	libhpc/h5_scale.c \
	libhpc/h5_raw.c \
	libhpc/h5_vds.c \
	libhpc/h5_reserve.c \
	libhpc/app/app_h5_internal.h \
	libhpc/app/output.c \
	libhpc/app/writer.c \
	libhpc/app/ckpt.c \
	libhpc/app/json.c \
	libhpc/app/schema.c \
	libhpc/app/schema_md.c \
	libhpc/app/check_internal.h \
	libhpc/app/check.c \
	libhpc/app/check_report.c \
	libhpc/app/check_h5.c \
	libhpc/app/check_values.c \
	libhpc/app/check_layers.c \
	libhpc/app/check_csv.c
libhpc_libio_la_CFLAGS = $(HPC_LIB_CFLAGS)

# libhpc-core.so: the core and the collectives; MPI and the C runtime
lib_LTLIBRARIES += libhpc/libhpc-core.la
libhpc_libhpc_core_la_SOURCES =
libhpc_libhpc_core_la_LIBADD = libhpc/libcore.la -lm
libhpc_libhpc_core_la_LDFLAGS = -version-info $(HPC_LT_VERSION) -no-undefined -Wl,--no-undefined

# libhpc.so: the app kit without HDF5, on libhpc-core (RUNPATH $ORIGIN:
# it finds libhpc-core beside itself in a moved prefix)
lib_LTLIBRARIES += libhpc/libhpc.la
libhpc_libhpc_la_SOURCES =
libhpc_libhpc_la_LIBADD = libhpc/libapp.la libhpc/libhpc-core.la -lm
libhpc_libhpc_la_LDFLAGS = -version-info $(HPC_LT_VERSION) -no-undefined -Wl,--no-undefined \
	-Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN'

# libhpc-h5.a: parallel HDF5 and the app kit's HDF5 part, static (PIC
# objects), for the programs that write or read HDF5 (with libhpc,
# libhpc-core and HDF5: HPC_LDADD, pkg-config --libs libhpc).
# It holds one object, its files linked together (ld -r) with their
# hidden names made local (objcopy --localize-hidden): what they call
# among themselves (check_values, app_json_parse, ...) is then as private
# as it is in a shared library, and cannot clash with a user program's
# own names; only the hpc_* API stays global (tests/symbols.sh).
# (A plain Automake library: libtool leaves an object it did not compile
# out of an installed archive.)
lib_LIBRARIES += libhpc/libhpc-h5.a
libhpc_libhpc_h5_a_SOURCES =
libhpc_libhpc_h5_a_LIBADD = libhpc/h5kit.o
CLEANFILES += libhpc/h5kit.o libhpc/h5kit.o.tmp
libhpc/h5kit.o: libhpc/libio.la
	$(AM_V_GEN)$(LD) -r -o $@.tmp --whole-archive libhpc/.libs/libio.a && \
	$(OBJCOPY) --localize-hidden $@.tmp $@ && rm -f $@.tmp

# the test hooks (coll/test_hooks.c, hpc_testing.h's functions are in
# libcore.la): linked into the tests with the layers' objects, never
# installed (tests/symbols.sh: none is exported)
libhpc_libtesting_la_SOURCES = libhpc/coll/test_hooks.c libhpc/coll/test_hooks.h
libhpc_libtesting_la_CFLAGS = $(HPC_LIB_CFLAGS)
HPC_TESTING_LDADD = libhpc/libtesting.la libhpc/libio.la libhpc/libapp.la libhpc/libcore.la $(HDF5_LIBS) -lm

# the GPU module: only it links the CUDA runtime (NCCL it opens itself; with their
# RUNPATH); -module: a plugin opened with dlopen, no version suffix
if HAVE_CUDA
pkglib_LTLIBRARIES += libhpc/libhpc-cuda.la
libhpc_libhpc_cuda_la_SOURCES = libhpc/cuda/module.c libhpc/coll/cuda.cu
libhpc_libhpc_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) $(NCCL_CPPFLAGS)
libhpc_libhpc_cuda_la_CFLAGS = $(HPC_LIB_CFLAGS)
libhpc_libhpc_cuda_la_LIBADD = $(CUDA_LIBS)
libhpc_libhpc_cuda_la_LDFLAGS = $(HPC_MODULE_LDFLAGS) $(NCCL_LDFLAGS)
endif

# A build tree holds its modules where an install does, relative to
# libhpc-core: libhpc/.libs/hpckit/ (links to each module), so programs
# run from the build tree find them as installed ones do.
HPC_MODULE_LINKS = libhpc/.libs/$(HPC_LIB_TO_MODULES)
all-local: hpc-module-links
hpc-module-links: $(lib_LTLIBRARIES) $(pkglib_LTLIBRARIES)
	@$(MKDIR_P) $(HPC_MODULE_LINKS); \
	for m in $(pkglib_LTLIBRARIES); do \
	  so=$$(dirname $$m)/.libs/$$(basename $$m .la).so; \
	  ln -sf "$$(realpath -m --relative-to=$(HPC_MODULE_LINKS) $$so)" $(HPC_MODULE_LINKS)/; \
	done
clean-local: hpc-module-links-clean
hpc-module-links-clean:
	rm -rf $(HPC_MODULE_LINKS)
.PHONY: hpc-module-links hpc-module-links-clean

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libhpc/libhpc.pc
EXTRA_DIST += libhpc/libhpc.pc.in
