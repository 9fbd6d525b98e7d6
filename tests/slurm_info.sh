#!/bin/sh
# slurm_info.sh - hpc-info under a real Slurm started by this test:
# the batch script through sbatch, srun with and without the MPI plugin,
# and mpiexec inside salloc.  Skips (77) without Slurm.
. "$top_srcdir/tests/slurm/cluster.sh"
. "$top_srcdir/tests/testlib.sh" slurm_info
FAIL_SHOW=$T/out
step start
slurm_start 4
trap 'slurm_stop; rm -rf "$T"' EXIT
export HPC_BIN=$(cd "$top_builddir" && pwd)
info=$HPC_BIN/apps/info/hpc-info
src=$(cd "$top_srcdir" && pwd)

# the batch script, as a user submits it
step sbatch
job=$(cd "$src" && sbatch --parsable -n 3 -o "$T/out" batch/info.sh) || fail "sbatch batch/info.sh"
slurm_wait "$job" 180 || fail "batch job $job: $(scontrol -o show job "$job" | grep -o 'JobState=[A-Z]* .*ExitCode=[0-9:]*')"
[ "$(grep -c -E '^ +[0-9]+  ' "$T/out")" = 3 ] || fail "batch: not 3 table rows"
grep -q '^launcher:  slurm' "$T/out" || fail "batch: launcher not slurm"
grep -q 'disagree' "$T/out" && fail "batch: launcher and MPI disagree"
grep -q -E '^selftest: .* 0 failed' "$T/out" || fail "batch: selftest"

step srun
# srun without the MPI plugin starts MPICH ranks as singletons: each
# refuses with the same line naming the plugin, exit 2 (Open MPI refuses
# to start instead)
if [ "$HPC_MPI_FLAVOR" = mpich ]; then
    timeout 60 srun --mpi=none -n 2 "$info" >"$T/out" 2>&1 && fail "srun --mpi=none: hpc-info ran"
    [ "$(grep -c '^hpc-info: started as 2 singletons (rank 0 of 1 each) by srun without MPI.s plugin (SLURM_NTASKS=2), but built with MPICH: .*srun --mpi=pmi2 under Slurm$' "$T/out")" = 2 ] ||
        fail "srun --mpi=none: not the singletons' line from each task"
fi
# a program the batch script runs itself (no srun step) is one rank of
# its own, not a singleton of a 3-task job
job=$(cd "$T" && sbatch --parsable -n 3 -o "$T/out" --wrap "$info") || fail "sbatch --wrap hpc-info"
slurm_wait "$job" 120 || fail "hpc-info in the batch script itself"
[ "$(grep -c -E '^ +[0-9]+  ' "$T/out")" = 1 ] || fail "batch script's own hpc-info: not 1 row"

step salloc
# mpiexec inside an allocation: the inner launcher is the one that counts
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # CI runs as root
timeout 120 salloc -n 2 "$MPIEXEC" -n 2 "$info" --json >"$T/out" 2>&1 || fail "salloc mpiexec"
grep -q '"launcher": "slurm"' "$T/out" && fail "salloc mpiexec: launcher read as slurm"
[ "$(grep -c '"rank":' "$T/out")" = 2 ] || fail "salloc mpiexec: not 2 ranks"
step done
echo "slurm_info.sh: all checks passed"
