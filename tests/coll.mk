# tests/coll.mk - collectives tests (issue 3).
#
# coll_ops: every collective x algorithm x dtype x op x in/out-of-place x
# blocking/nonblocking against MPI's own collectives, at 1-5 and 7 ranks.
check_PROGRAMS += tests/coll_ops
tests_coll_ops_SOURCES = tests/coll_ops.c tests/coll_testlib.h
TESTS += tests/coll_ops.np1 tests/coll_ops.np2 tests/coll_ops.np3 tests/coll_ops.np4 \
	 tests/coll_ops.np5 tests/coll_ops.np7
