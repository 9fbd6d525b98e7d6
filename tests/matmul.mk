# tests/matmul.mk - hpc-matmul's tests.
#   matmul.sh      against the serial reference (matmul_check) on 1-4, 6, 7
#                  ranks, many grids and shapes; --verify; round trip; bad input
check_PROGRAMS += tests/matmul_check
tests_matmul_check_LDADD = $(LDADD) $(BLAS_LIBS)
#   matmul_hostile.sh  a product no node holds, empty inputs, NaN and
#                  infinity (refused, or --allow-nonfinite and checked
#                  exactly), planted errors beside them; 1-4 ranks
dist_check_SCRIPTS += tests/matmul.sh tests/matmul_hostile.sh
TESTS += tests/matmul.sh tests/matmul_hostile.sh
