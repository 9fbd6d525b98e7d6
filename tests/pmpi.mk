# tests/pmpi.mk - libhpc-mpi.so, the PMPI drop-in (issues 13, 22).
# pmpi_known: a plain MPI program (linked with MPI only) checking the
#   collectives the drop-in takes over against known answers.
# pmpi.sh: runs it at 1-5 and 7 ranks (4 with two fake nodes) under LD_PRELOAD=libhpc-mpi.so with
#   HPC_MPI_VERBOSE=1 (hpckit must have served calls and let the unserved
#   ones through), once with HPC_NODE_SPLIT (hierarchical), and an mpi4py
#   script where mpi4py is installed (else that part is skipped).
# pmpi_conform: a plain MPI program using what MPI allows of datatypes in
#   collectives (signatures that match with different types on each rank,
#   derived and duplicated types, MPI_IN_PLACE at the root only, pair types
#   with MINLOC/MAXLOC, zero counts, many nonblocking calls on duplicated
#   communicators completed in another order on every rank).
# pmpi_conform.sh: runs it under the drop-in with each algorithm forced in
#   turn at 2, 3 and 5 ranks and with auto at 1-7 ranks, each run under a
#   timeout; every data-movement call must have been served by hpckit.
#   `tests/pmpi_conform.sh --full` (by hand): every algorithm at 1-7 ranks.
# pmpi_probe: the probes of issue 32 (communicators made by MPI_Comm_idup
#   whose first calls start in another order on some ranks; as many
#   communicators as MPI gives), run by pmpi.sh.
check_PROGRAMS += tests/pmpi_known tests/pmpi_conform tests/pmpi_probe
tests_pmpi_known_SOURCES = tests/pmpi_known.c tests/pmpi_check.h
tests_pmpi_known_LDADD =
tests_pmpi_conform_SOURCES = tests/pmpi_conform.c tests/pmpi_check.h
tests_pmpi_conform_LDADD =
tests_pmpi_probe_SOURCES = tests/pmpi_probe.c tests/pmpi_check.h
tests_pmpi_probe_LDADD =
dist_check_SCRIPTS += tests/pmpi.sh tests/pmpi_mpi4py.py tests/pmpi_conform.sh
TESTS += tests/pmpi.sh tests/pmpi_conform.sh
