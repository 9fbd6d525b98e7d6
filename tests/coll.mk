# tests/coll.mk - collectives tests (issue 3).
#
# coll_ops: every collective x algorithm x dtype x op x in/out-of-place x
#   blocking/nonblocking against MPI's own collectives, at 1-5 and 7 ranks
#   (5: one rank folded in and out of the butterflies, 7: three).
# coll_errors: argument errors, names, auto (tuning file, env, model).
# coll_selftest: hpc_coll_selftest (hpc-info --selftest) at 1 and 3 ranks.
# coll_split: coll_ops with the limits for messages over 2 GiB lowered to
#   a few bytes, so splitting runs (and is checked) on small buffers.
# coll_pool: the scratch pool keeps no more than its cap and frees what
#   sat unused, at 2 ranks.
# coll_request_free: hpc_request_free, freed requests complete in the
#   background and before their communicator is freed; 2 and 3 ranks.
# coll_wrap: int32/int64 sums and products that overflow wrap around, every
#   algorithm, against known answers, at 2 and 3 ranks.
# coll_registry: the table of algorithms is complete, everything derived
#   from it agrees with it, and every row passes the self-test.
# coll_mix: many overlapping nonblocking collectives of mixed kinds, each
#   algorithm forced in turn, against known answers, at 5 and 7 ranks
#   (issue 13: the bruck allgather hang).
# coll_tune: the tuning file's rows (nodes, ranks per node, memory kind,
#   bytes) and what auto and hier's phases choose from them; the old
#   format refused.
# coll_shm.sh: the shared-memory algorithms with single copy forced at
#   2-7 ranks (coll_ops, coll_mix), and a rank killed by kill -9 inside a
#   shared-memory collective ends the job within seconds (coll_shm_kill).
# coll_shm_moves: shm's single-copy allreduce makes one system call per
#   mate and chunk (issue 29.2), with calls through the segment in flight.
# coll_topo: nodes and HPC_NODE_SPLIT (odd-even, blocks:K): hpc_init's node
#   id/count/communicators, each communicator's node map, bad values refused.
# node_split.sh: hpc-info's node column under HPC_NODE_SPLIT; a bad value is
#   one line, exit 2.
# coll_hier.sh: coll_ops and coll_mix restricted to the hierarchical
#   algorithms, on 2-4 fake nodes (HPC_NODE_SPLIT) at 4, 5 and 7 ranks.
# coll_sim.sh: hpc-collbench --simulate: tables at 64/8 and 4096/512, CSV,
#   ring's predicted busbw against the link bandwidth (published figure).
# coll_device: device buffers and NCCL; skips without a GPU.
# coll_stream: stream-ordered calls and hpc_request_stream_wait: the host
#   part everywhere, the device part where every rank has a GPU.
# coll_misuse.sh: HPC_DEBUG=coll desync check and HPC_TIMEOUT watchdog.
# coll_bench.sh: hpc-collbench options, outputs and usage errors.
# coll_bench_hostile.sh: hostile input (issue 14): plot names, full disks,
#   failed runs over good files, overflowing sizes, bad settings and tuning
#   files, a stopped rank under HPC_TIMEOUT.
check_PROGRAMS += tests/coll_ops tests/coll_errors tests/coll_selftest tests/coll_device \
	tests/coll_misuse tests/coll_registry tests/coll_wrap tests/coll_split \
	tests/coll_pool tests/coll_request_free tests/coll_stream tests/coll_mix tests/coll_topo \
	tests/coll_tune tests/coll_shm_kill tests/coll_shm_moves
tests_coll_ops_SOURCES = tests/coll_ops.c tests/coll_testlib.h
tests_coll_errors_SOURCES = tests/coll_errors.c
tests_coll_selftest_SOURCES = tests/coll_selftest.c
tests_coll_device_SOURCES = tests/coll_device.c
tests_coll_misuse_SOURCES = tests/coll_misuse.c
tests_coll_registry_SOURCES = tests/coll_registry.c
tests_coll_wrap_SOURCES = tests/coll_wrap.c
tests_coll_pool_SOURCES = tests/coll_pool.c
tests_coll_request_free_SOURCES = tests/coll_request_free.c
tests_coll_stream_SOURCES = tests/coll_stream.c
tests_coll_mix_SOURCES = tests/coll_mix.c
tests_coll_topo_SOURCES = tests/coll_topo.c
tests_coll_tune_SOURCES = tests/coll_tune.c
tests_coll_shm_kill_SOURCES = tests/coll_shm_kill.c
tests_coll_split_SOURCES = tests/coll_ops.c tests/coll_testlib.h
tests_coll_split_CPPFLAGS = $(AM_CPPFLAGS) -DCOLL_SPLIT
# the tests that look inside (test_hooks.h) link libhpc's objects
tests_coll_ops_LDADD = $(HPC_TESTING_LDADD)
tests_coll_split_LDADD = $(HPC_TESTING_LDADD)
tests_coll_errors_LDADD = $(HPC_TESTING_LDADD)
tests_coll_pool_LDADD = $(HPC_TESTING_LDADD)
tests_coll_registry_LDADD = $(HPC_TESTING_LDADD)
tests_coll_request_free_LDADD = $(HPC_TESTING_LDADD)
tests_coll_topo_LDADD = $(HPC_TESTING_LDADD)
tests_coll_tune_LDADD = $(HPC_TESTING_LDADD)
tests_coll_shm_kill_LDADD = $(HPC_TESTING_LDADD)
tests_coll_shm_moves_LDADD = $(HPC_TESTING_LDADD)
# The device logic without a GPU: a fake runtime behind libhpc's GPU table
# (tests/fake_gpu.h; hooks, so they link libhpc's objects):
#   coll_nccl_stub  NCCL's nonblocking communicator through a stub: calls
#                   back to back go in one at a time, in order (1, 2 ranks)
#   coll_devfree    frees wait for stream-wait kernels; slots come back
#   coll_gate       CUDA-aware MPI and staged copies wait for the legacy
#                   stream's event (2, 3 ranks)
#   coll_lazyctx    no GPU context until the first device use; a GPU that
#                   cannot be made current leaves the rank unbound (1, 3)
check_PROGRAMS += tests/coll_nccl_stub tests/coll_devfree tests/coll_gate tests/coll_lazyctx
tests_coll_nccl_stub_LDADD = $(HPC_TESTING_LDADD)
tests_coll_devfree_LDADD = $(HPC_TESTING_LDADD)
tests_coll_gate_LDADD = $(HPC_TESTING_LDADD)
tests_coll_lazyctx_LDADD = $(HPC_TESTING_LDADD)
# gpu_lazyctx: the same on a real GPU, asked of the driver (skips without)
check_PROGRAMS += tests/gpu_lazyctx
tests_gpu_lazyctx_LDADD = $(HPC_TESTING_LDADD)
TESTS += tests/gpu_lazyctx-np1.mpi tests/gpu_lazyctx-np2.mpi
TESTS += tests/coll_nccl_stub-np1.mpi tests/coll_nccl_stub-np2.mpi tests/coll_devfree-np1.mpi tests/coll_devfree-np2.mpi \
	tests/coll_gate-np2.mpi tests/coll_gate-np3.mpi tests/coll_lazyctx-np1.mpi tests/coll_lazyctx-np3.mpi
EXTRA_DIST += tests/fake_gpu.h
# coll_stream makes streams and kernels of its own: the CUDA runtime
tests_coll_stream_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
if HAVE_CUDA
tests_coll_stream_LDADD = $(LDADD) $(CUDA_LDFLAGS) $(CUDA_LIBS)
else
# (set under a conditional, a variable is empty in the other branch)
tests_coll_stream_LDADD = $(LDADD)
endif
TESTS += tests/coll_ops-np1.mpi tests/coll_ops-np2.mpi tests/coll_ops-np3.mpi tests/coll_ops-np4.mpi \
	 tests/coll_ops-np5.mpi \
	 tests/coll_ops-np7.mpi \
	 tests/coll_errors-np1.mpi tests/coll_errors-np2.mpi \
	 tests/coll_selftest-np1.mpi tests/coll_selftest-np3.mpi tests/coll_registry-np3.mpi \
	 tests/coll_wrap-np2.mpi tests/coll_wrap-np3.mpi \
	 tests/coll_split-np2.mpi tests/coll_split-np3.mpi tests/coll_pool-np2.mpi \
	 tests/coll_request_free-np2.mpi tests/coll_request_free-np3.mpi \
	 tests/coll_device-np1.mpi tests/coll_device-np2.mpi \
	 tests/coll_stream-np1.mpi tests/coll_stream-np2.mpi \
	 tests/coll_mix-np5.mpi tests/coll_mix-np7.mpi \
	 tests/coll_topo-np1.mpi tests/coll_topo-np4.mpi tests/coll_topo-np5.mpi tests/coll_topo-np7.mpi \
	 tests/coll_tune-np1.mpi \
	 tests/coll_shm_moves-np2.mpi tests/coll_shm_moves-np3.mpi
dist_check_SCRIPTS += tests/coll_misuse.sh tests/coll_bench.sh tests/coll_bench_hostile.sh tests/node_split.sh \
	tests/coll_hier.sh tests/coll_sim.sh tests/coll_shm.sh
TESTS += tests/coll_misuse.sh tests/coll_bench.sh tests/coll_bench_hostile.sh tests/node_split.sh tests/coll_hier.sh \
	 tests/coll_sim.sh tests/coll_shm.sh
