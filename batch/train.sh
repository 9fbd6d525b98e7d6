#!/bin/bash
#SBATCH --job-name=hpc-train
#SBATCH --ntasks=4
#SBATCH --cpus-per-task=1
#SBATCH --time=01:00:00
#SBATCH --requeue
#SBATCH --signal=B:USR1@120
#SBATCH --output=hpc-train-%j.out
#SBATCH --open-mode=append
#
# Train with hpc-train, surviving time limits:
#
#   sbatch batch/train.sh RUNDIR [hpc-train options]
#   sbatch -n 16 -t 4:00:00 batch/train.sh runs/ode --data ode.h5 --layers 11,256,256,10 --epochs 100
#   sbatch -n 4 --gpus-per-task=1 batch/train.sh runs/gpu --data ode.h5 --device cuda
#
# The options are hpc-train's own, passed through unchanged (see
# hpc-train --help); RUNDIR is its --out.  Two minutes before the time
# limit Slurm signals this script (--signal); it passes the signal on to
# every task, hpc-train finishes its step, writes RUNDIR/checkpoint.h5 and
# exits 75 ("checkpointed, resubmit me"); then the script requeues the
# job, and the next run finds the checkpoint and continues it (--resume),
# bit for bit as one uninterrupted run.  A killed node is the same story:
# `scontrol requeue` continues from the last checkpoint (--ckpt-every).
set -u
. "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}/batch/common.sh"

rundir=${1:?usage: sbatch batch/train.sh RUNDIR [hpc-train options]}
shift
echo "== job ${SLURM_JOB_ID:-?} (restart ${SLURM_RESTART_COUNT:-0}): ${SLURM_NTASKS:-?} tasks, run folder $rundir"

# the first run starts afresh; every later one continues the checkpoint
resume=
if [ -f "$rundir/checkpoint.h5" ]; then
    resume=--resume
    echo "== continuing $rundir/checkpoint.h5"
fi
hpc_srun_stoppable train --out "$rundir" $resume "$@"
rc=$?
if [ "$hpc_stopped" = 1 ] && [ "$rc" = 75 ]; then
    echo "== requeueing job $SLURM_JOB_ID; the next run resumes $rundir/checkpoint.h5"
    scontrol requeue "$SLURM_JOB_ID"
fi
exit $rc
