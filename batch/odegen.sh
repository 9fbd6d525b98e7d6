#!/bin/bash
#SBATCH --job-name=hpc-odegen
#SBATCH --ntasks=4
#SBATCH --time=01:00:00
#SBATCH --requeue
#SBATCH --signal=B:USR1@120
#SBATCH --output=hpc-odegen-%j.out
#SBATCH --open-mode=append
#
# Generate an ODE dataset with hpc-odegen, surviving time limits:
#
#   sbatch batch/odegen.sh OUT.h5 [hpc-odegen options]
#   sbatch -n 64 -t 4:00:00 batch/odegen.sh runs/lorenz.h5 --system lorenz -n 10000000
#
# Two minutes before the time limit Slurm signals this script (--signal);
# it requeues the job, and the next run continues OUT.h5.partial from its
# finished chunks (--resume), so the final OUT.h5 equals one uninterrupted
# run's bit for bit.  A killed node is the same story: `scontrol requeue`.
set -u
. "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}/batch/common.sh"

out=${1:?usage: sbatch batch/odegen.sh OUT.h5 [hpc-odegen options]}
shift
echo "== job ${SLURM_JOB_ID:-?} (restart ${SLURM_RESTART_COUNT:-0}): ${SLURM_NTASKS:-?} tasks, output $out"

requeue() {
    echo "== time limit near: requeueing job $SLURM_JOB_ID; the next run resumes $out.partial"
    scontrol requeue "$SLURM_JOB_ID"
}
trap requeue USR1

# In the background so that the trap runs while we wait (bash defers traps
# until a foreground command ends).  --resume starts afresh if there is no
# .partial, so every run of this job is the same command.
hpc_srun odegen --resume --out "$out" "$@" &
pid=$!
while :; do
    wait "$pid"
    rc=$?
    # a trap interrupts wait with status > 128 while srun still runs
    kill -0 "$pid" 2>/dev/null || break
done
exit $rc
