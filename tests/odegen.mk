# tests/odegen.mk - hpc-odegen's tests (see each file's header).
#   odegen_unit      engine: sine accuracy, 8-lane == 1-lane (the CUDA
#                    path) bit for bit, independence from neighbours,
#                    every status, the time grid
#   odegen_scipy.sh  against scipy's solve_ivp(RK45) (needs PYTHON_SCI);
#                    blas_kernels.sh (by hand) runs it under every
#                    OpenBLAS kernel
#   odegen_ranks.sh  identical data on 1, 2, 3, 4 ranks
#   odegen_resume.sh kill -9 a rank, SIGUSR1 one rank, --resume: identical
#   odegen_writer.sh  kill -9 between syncs and a torn chunk (checksums),
#                     --sync-every 0, --dtype float32, a bad --sync-every
#   odegen_errors.sh bad input: one line, exit 2 or 1, no output file
#   odegen_hostile.sh the hostile-input probe's cases, replayed
#   odegen_status.sh every failure status reachable, run goes on
#   odegen_shards.sh --shard I/N by hand (one --out) and --join N equal one
#                    big run
#   odegen_join_read.sh  the joined file as an input: hpc-train and
#                    hpc-matmul read it as the plain one, and refuse it
#                    naming a missing shard
#   odegen_batch_array.sh  batch/odegen.sh's job-array mapping under
#                    Slurm's variables: shards, the join job, sparse
#                    arrays refused
#   odegen_xarray.sh xarray opens plain and joined files with named
#                    dimensions (needs python3-xarray)
#   odegen_cuda.sh   --device cuda against the CPU (skips without a GPU)
#   odegen_sysfile.sh  systems from C files: the built-ins' files give
#                    their bits, a test system (tests/odegen_systems/)
#                    against scipy, on 1 and 3 ranks, resumed, sharded;
#                    --compile-to/--system-lib, the cache, bad files
#   odegen_events.sh events (a ball, thresholds) and --t-eval against
#                    scipy, on 1 and 3 ranks, resumed, sharded
#   odegen_stiff.sh  --method BDF (SUNDIALS CVODE) and ESDIRK (ARKODE) on
#                    Robertson, van der Pol mu=1000 and a Brusselator of
#                    dim 100 against scipy's BDF and Radau; 1 and 3 ranks;
#                    events; --max-steps; apps/odegen/bench.sh METHOD=BDF
#                    and ESDIRK on 200 trajectories (cvode_direct's bits)
# the engine as the GPU runs it (one lane, any stride), per built-in
ODEGEN_LANE1 = tests/odegen_lane1.h tests/odegen_lane1_decay_sin.c tests/odegen_lane1_lorenz.c \
	tests/odegen_lane1_vanderpol.c tests/odegen_lane1_lotka_volterra.c tests/odegen_lane1_kuramoto.c
check_PROGRAMS += tests/odegen_unit
tests_odegen_unit_SOURCES = tests/odegen_unit.c $(ODEGEN_LANE1)
tests_odegen_unit_LDADD = apps/odegen/libodesys.a $(HPC_LDADD)
tests_odegen_unit_CPPFLAGS = $(apps_odegen_hpc_odegen_CPPFLAGS)
tests_odegen_unit_CFLAGS = $(apps_odegen_hpc_odegen_CFLAGS)
TESTS += tests/odegen_unit
#   odegen_layout    the GPU's scratch layout (stride 65,536, dim 2,000:
#                    offsets past 2^31) on the CPU, against the CPU engine
# h5close: datasets compared within rtol or a floor against their scale
# (odegen_cuda.sh, device-check.sh: the GPU's values against the CPU's)
check_PROGRAMS += tests/h5close
check_PROGRAMS += tests/odegen_layout
tests_odegen_layout_SOURCES = tests/odegen_layout.c $(ODEGEN_LANE1)
tests_odegen_layout_LDADD = apps/odegen/libodesys.a $(HPC_LDADD)
tests_odegen_layout_CPPFLAGS = $(tests_odegen_unit_CPPFLAGS)
# -fwrapv: a 32-bit index that overflows wraps, as it does on the GPU,
# instead of being undefined behaviour the optimiser may hide
tests_odegen_layout_CFLAGS = $(tests_odegen_unit_CFLAGS) -fwrapv
TESTS += tests/odegen_layout
ODEGEN_TESTS = tests/odegen_scipy.sh tests/odegen_ranks.sh tests/odegen_resume.sh \
	tests/odegen_errors.sh tests/odegen_hostile.sh tests/odegen_status.sh tests/odegen_shards.sh \
	tests/odegen_join_read.sh tests/odegen_batch_array.sh tests/odegen_xarray.sh tests/odegen_cuda.sh \
	tests/odegen_writer.sh tests/odegen_sysfile.sh tests/odegen_events.sh tests/odegen_stiff.sh
dist_check_SCRIPTS += $(ODEGEN_TESTS)
TESTS += $(ODEGEN_TESTS)
EXTRA_DIST += tests/odegen_lib.sh tests/odegen_ref.py tests/odegen_systems/forced.c \
	tests/odegen_systems/ball.c tests/odegen_systems/lv-threshold.c tests/odegen_systems/robertson.c \
	tests/odegen_systems/brusselator.c tests/odegen_stiff.py
