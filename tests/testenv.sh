# testenv.sh - sourced by the automake test harness before every test
# (AM_TESTS_ENVIRONMENT): the tests must not depend on the shell they were
# started from.  A stale launcher variable (RANK/WORLD_SIZE after torchrun,
# SLURM_* inside an allocation), a user's thread count or an HPC_* setting
# would otherwise change what libhpc sees; the tests set what they test.
# HPC_TEST_* (settings of the harness itself) are kept.
for v in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p'); do
    case $v in
    HPC_TEST_*) ;;
    HPC_*|SLURM_*|SBATCH_*|SALLOC_*|SRUN_*|OMPI_COMM_WORLD_*|PMI_*|PMIX_*|MPI_LOCAL*) unset "$v" ;;
    RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|OMP_NUM_THREADS|OPENBLAS_NUM_THREADS) unset "$v" ;;
    esac
done
unset v
