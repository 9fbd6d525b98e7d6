# tests/train.mk - hpc-train's tests and those of the libhpc pieces it
# brought (see each file's header).
#
# libhpc:
#   test_perm        random-access permutations (hpc_rng.h): bijective,
#                    keyed, unbiased
check_PROGRAMS += tests/test_perm
TESTS += tests/test_perm
