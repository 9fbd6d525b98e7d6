# tests/matmul.mk - hpc-matmul's tests.
#   matmul.sh      against the serial reference (matmul_check) on 1-4, 6, 7
#                  ranks, many grids and shapes; --verify; round trip; bad input
check_PROGRAMS += tests/matmul_check
tests_matmul_check_LDADD = $(LDADD) $(BLAS_LIBS)
dist_check_SCRIPTS += tests/matmul.sh
TESTS += tests/matmul.sh
