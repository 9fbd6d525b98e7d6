# tests/train.mk - hpc-train's tests and those of the libhpc pieces it
# brought (see each file's header).
#
# libhpc:
#   test_perm        random-access permutations (hpc_rng.h): bijective,
#                    keyed, unbiased
#   test_h5_at       hpc_h5_read_rows_at: shuffled rows with repeats, 1-4 ranks
#   test_ckpt        checkpoints (atomic replace, keys, damaged files) and
#                    hpc_all_same, 1-4 ranks
check_PROGRAMS += tests/test_perm tests/test_h5_at tests/test_ckpt
TESTS += tests/test_perm \
	tests/test_h5_at-np1.mpi tests/test_h5_at-np2.mpi tests/test_h5_at-np3.mpi tests/test_h5_at-np4.mpi \
	tests/test_ckpt-np1.mpi tests/test_ckpt-np2.mpi tests/test_ckpt-np3.mpi tests/test_ckpt-np4.mpi
