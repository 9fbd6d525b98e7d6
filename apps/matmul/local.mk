# apps/matmul/local.mk - hpc-matmul: distributed block matrix multiply
# (SUMMA) over parallel HDF5, and the ScaLAPACK pdgemm driver its
# benchmark compares against.
bin_PROGRAMS += apps/matmul/hpc-matmul
apps_matmul_hpc_matmul_SOURCES = \
	apps/matmul/main.c \
	apps/matmul/options.c \
	apps/matmul/dist.c \
	apps/matmul/io.c \
	apps/matmul/summa.c \
	apps/matmul/verify.c \
	apps/matmul/verify_nf.c \
	apps/matmul/matmul.h \
	apps/matmul/mm_ops.h
# OpenBLAS on the CPU; --device cuda: the GPU operations (gpu.cu) are a
# module of their own, PREFIX/lib/hpckit/hpc-matmul-cuda.so, opened by
# gpu_load.c only when asked for (no CUDA runtime in the program).
apps_matmul_hpc_matmul_SOURCES += apps/matmul/gpu_load.c
apps_matmul_hpc_matmul_LDADD = $(LDADD) $(BLAS_LIBS)
if HAVE_CUDA
# the .cu object is linked by name (see apps/odegen/local.mk); cuBLAS is
# opened at run time (hpc_dlsyms, from libhpc-core)
pkglib_LTLIBRARIES += apps/matmul/hpc-matmul-cuda.la
apps_matmul_hpc_matmul_cuda_la_SOURCES =
apps_matmul_hpc_matmul_cuda_la_LIBADD = apps/matmul/gpu.lo libhpc/libhpc-core.la $(CUDA_LIBS)
apps_matmul_hpc_matmul_cuda_la_LDFLAGS = $(HPC_MODULE_LDFLAGS)
EXTRA_apps_matmul_hpc_matmul_cuda_la_DEPENDENCIES = apps/matmul/gpu.lo
apps/matmul/gpu.lo: apps/matmul/gpu.cu apps/matmul/mm_ops.h
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) -c $(srcdir)/apps/matmul/gpu.cu
CLEANFILES += apps/matmul/gpu.lo apps/matmul/gpu.o apps/matmul/.libs/gpu.o
endif
EXTRA_DIST += apps/matmul/gpu.cu apps/matmul/bench.sh apps/matmul/bench_blas.sh

# The benchmark's baselines (apps/matmul/bench.sh): one process's OpenBLAS
# GEMM, and ScaLAPACK's pdgemm where ScaLAPACK is installed.
noinst_PROGRAMS += apps/matmul/dgemm_bench
apps_matmul_dgemm_bench_SOURCES = apps/matmul/dgemm_bench.c
apps_matmul_dgemm_bench_LDADD = $(LDADD) $(BLAS_LIBS)
if HAVE_SCALAPACK
noinst_PROGRAMS += apps/matmul/pdgemm_bench
apps_matmul_pdgemm_bench_SOURCES = apps/matmul/pdgemm_bench.c
apps_matmul_pdgemm_bench_LDADD = $(SCALAPACK_LIBS) $(LDADD) $(BLAS_LIBS)
else
EXTRA_DIST += apps/matmul/pdgemm_bench.c
endif
