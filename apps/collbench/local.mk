# apps/collbench/local.mk - hpc-collbench: collectives benchmark (issue 3).
bin_PROGRAMS += apps/collbench/hpc-collbench
apps_collbench_hpc_collbench_SOURCES = apps/collbench/collbench.c apps/collbench/model.c apps/collbench/model.h \
	apps/collbench/simulate.c
# --mem cuda: device buffers through libhpc (hpc_coll_dev_alloc), not
# the CUDA runtime
# a plain MPI program (no hpckit) to run with and without libhpc-mpi.so
noinst_PROGRAMS += apps/collbench/mpi_allreduce_bench
apps_collbench_mpi_allreduce_bench_SOURCES = apps/collbench/mpi_allreduce_bench.c
