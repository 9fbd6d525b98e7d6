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
# it passes the signal on to hpc-odegen, which stops taking work, keeps
# OUT.h5.partial and exits 75 ("stopped, resumable"); then the script
# requeues the job, and the next run continues OUT.h5.partial from its
# finished chunks (--resume), so the final OUT.h5 equals one uninterrupted
# run's bit for bit.  A killed node is the same story: `scontrol requeue`.
set -u
. "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}/batch/common.sh"

out=${1:?usage: sbatch batch/odegen.sh OUT.h5 [hpc-odegen options]}
shift
echo "== job ${SLURM_JOB_ID:-?} (restart ${SLURM_RESTART_COUNT:-0}): ${SLURM_NTASKS:-?} tasks, output $out"

# --resume starts afresh if there is no .partial, so every run of this job
# is the same command.
hpc_srun_stoppable odegen --resume --out "$out" "$@"
rc=$?
if [ "$hpc_stopped" = 1 ] && [ "$rc" = 75 ]; then
    echo "== requeueing job $SLURM_JOB_ID; the next run resumes $out.partial"
    scontrol requeue "$SLURM_JOB_ID"
fi
exit $rc
