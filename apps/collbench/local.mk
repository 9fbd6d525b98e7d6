# apps/collbench/local.mk - hpc-collbench: collectives benchmark (issue 3).
bin_PROGRAMS += apps/collbench/hpc-collbench
apps_collbench_hpc_collbench_SOURCES = apps/collbench/collbench.c apps/collbench/model_measure.c apps/collbench/model.h \
	apps/collbench/sim_table.c
# no HDF5: neither its headers nor its library (tests/needed.sh)
apps_collbench_hpc_collbench_LDADD = $(HPC_APP_LDADD)
apps_collbench_hpc_collbench_CPPFLAGS = $(HPC_APP_CPPFLAGS)
# --mem cuda: device buffers through libhpc (hpc_coll_dev_alloc), not
# the CUDA runtime
# a plain MPI program (no hpckit) to run with and without libhpc-mpi.so
noinst_PROGRAMS += apps/collbench/mpi_allreduce_bench
apps_collbench_mpi_allreduce_bench_SOURCES = apps/collbench/mpi_allreduce_bench.c
# the per-call path of 8-byte allreduces and bcasts, for instruction counts
# under callgrind (docs/collectives.md): plain MPI (MPI's own, or the
# drop-in's under LD_PRELOAD) and through hpc_allreduce/hpc_bcast
noinst_PROGRAMS += apps/collbench/mpi_small_loop apps/collbench/hpc_small_loop
apps_collbench_mpi_small_loop_SOURCES = apps/collbench/small_loop.c
apps_collbench_mpi_small_loop_LDADD =
apps_collbench_hpc_small_loop_SOURCES = apps/collbench/small_loop.c
apps_collbench_hpc_small_loop_CPPFLAGS = $(AM_CPPFLAGS) -DSMALL_LOOP_HPC
apps_collbench_hpc_small_loop_LDADD = $(HPC_LDADD)
