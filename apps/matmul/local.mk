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
if HAVE_CUDA
# the .cu object is linked by name (see apps/odegen/local.mk)
apps_matmul_hpc_matmul_LDADD = apps/matmul/gpu.lo $(LDADD) $(CUDA_LDFLAGS) $(CUDA_LIBS)
EXTRA_apps_matmul_hpc_matmul_DEPENDENCIES = apps/matmul/gpu.lo
apps/matmul/gpu.lo: apps/matmul/gpu.cu apps/matmul/mm_ops.h
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) -c $(srcdir)/apps/matmul/gpu.cu
CLEANFILES += apps/matmul/gpu.lo apps/matmul/gpu.o apps/matmul/.libs/gpu.o
else
apps_matmul_hpc_matmul_SOURCES += apps/matmul/gpu_none.c
apps_matmul_hpc_matmul_LDADD = $(LDADD)
endif
EXTRA_DIST += apps/matmul/gpu.cu apps/matmul/gpu_none.c apps/matmul/bench.sh

# The benchmark's baselines (apps/matmul/bench.sh): one process's OpenBLAS
# GEMM, and ScaLAPACK's pdgemm where ScaLAPACK is installed.
noinst_PROGRAMS += apps/matmul/dgemm_bench
apps_matmul_dgemm_bench_SOURCES = apps/matmul/dgemm_bench.c
if HAVE_SCALAPACK
noinst_PROGRAMS += apps/matmul/pdgemm_bench
apps_matmul_pdgemm_bench_SOURCES = apps/matmul/pdgemm_bench.c
apps_matmul_pdgemm_bench_LDADD = $(SCALAPACK_LIBS) $(LDADD)
else
EXTRA_DIST += apps/matmul/pdgemm_bench.c
endif
