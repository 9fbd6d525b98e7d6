# tests/pmpi.mk - libhpc-mpi.so, the PMPI drop-in (issue 13).
# pmpi_known: a plain MPI program (linked with MPI only) checking the
#   collectives the drop-in takes over against known answers.
# pmpi.sh: runs it at 1-5 and 7 ranks (4 with two fake nodes) under LD_PRELOAD=libhpc-mpi.so with
#   HPC_MPI_VERBOSE=1 (hpckit must have served calls and let the unserved
#   ones through), once with HPC_NODE_SPLIT (hierarchical), and an mpi4py
#   script where mpi4py is installed (else that part is skipped).
check_PROGRAMS += tests/pmpi_known
tests_pmpi_known_SOURCES = tests/pmpi_known.c
tests_pmpi_known_LDADD =
dist_check_SCRIPTS += tests/pmpi.sh tests/pmpi_mpi4py.py
TESTS += tests/pmpi.sh
