# libhpc/coll/local.mk - the collectives (libhpc/coll/, see the layering
# at the top of coll_internal.h and docs/collectives.md): a layer of
# libhpc-core (libhpc/local.mk).  Their CUDA kernels (cuda.cu) are in the
# GPU module, their test hooks (test_hooks.c) in libtesting.la.
libhpc_libcore_la_SOURCES += \
	libhpc/coll/api.c \
	libhpc/coll/selftest.c \
	libhpc/coll/expect.c \
	libhpc/coll/simulate.c \
	libhpc/coll/select.c \
	libhpc/coll/build.c \
	libhpc/coll/registry.c \
	libhpc/coll/alg_name.c \
	libhpc/coll/alg/tree.c \
	libhpc/coll/alg/ring.c \
	libhpc/coll/alg/butterfly.c \
	libhpc/coll/alg/hier.c \
	libhpc/coll/alg/shm.c \
	libhpc/coll/native.c \
	libhpc/coll/nccl.c \
	libhpc/coll/nccl_comm.c \
	libhpc/coll/request.c \
	libhpc/coll/call_check.c \
	libhpc/coll/stall_check.c \
	libhpc/coll/schedule.c \
	libhpc/coll/comm.c \
	libhpc/coll/shmseg.c \
	libhpc/coll/topo.c \
	libhpc/coll/devsync.c \
	libhpc/coll/device.c \
	libhpc/coll/devgpu.c \
	libhpc/coll/reduce.c \
	libhpc/coll/settings_cache.c \
	libhpc/coll/types.c \
	libhpc/coll/coll_internal.h \
	libhpc/coll/registry.h \
	libhpc/coll/colls.h \
	libhpc/coll/settings_rows.h
