# libhpc/coll.mk - collectives: API and requests (coll.c), schedules
# (coll_sched.c), host reductions, one file per algorithm family, the
# native MPI and NCCL backends, device support and the self-test.
libhpc_libhpc_la_SOURCES += \
	libhpc/coll.c \
	libhpc/coll_sched.c \
	libhpc/coll_reduce.c \
	libhpc/coll_alg_tree.c \
	libhpc/coll_alg_ring.c \
	libhpc/coll_alg_butterfly.c \
	libhpc/coll_tune.c \
	libhpc/coll_native.c \
	libhpc/coll_nccl.c \
	libhpc/coll_dev.c \
	libhpc/coll_selftest.c \
	libhpc/coll_internal.h
if HAVE_CUDA
libhpc_libhpc_la_SOURCES += libhpc/coll_cuda.cu
endif
# the collectives section of the README and its plot
EXTRA_DIST += docs/collectives.md docs/collbench-allreduce.png
