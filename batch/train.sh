#!/bin/bash
#SBATCH --job-name=hpc-train
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=4
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --signal=B:USR1@180
#SBATCH --output=%x-%j.out
#SBATCH --open-mode=append
##SBATCH --gpus-per-task=1            (with --device cuda: remove one '#')
#
# Data-parallel training with hpc-train that survives time limits; the
# program's own options, unchanged:
#
#   sbatch batch/train.sh --data ode.h5 --epochs 3 --out runs/t1
#   sbatch -N 2 --gpus-per-task=1 batch/train.sh --data ode.h5 --device cuda --out runs/t2
#   bash batch/train.sh --data ode.h5 --epochs 1 --out runs/t3    (no Slurm: local cores)
#
# Three minutes before the time limit Slurm signals this script; it passes
# the signal on, hpc-train finishes its step, writes RUNDIR/checkpoint.h5
# and exits 75; the script requeues the job and the next run resumes from
# the checkpoint (--resume) to the same model an uninterrupted run ends with.
# Outside Slurm (run with bash) it prints the command that
# continues: this script with --out RUNDIR and --resume.
# Without --out the run folder is runs/JOBNAME-JOBID.
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
# shellcheck source-path=SCRIPTDIR source=common.sh # (found at run time: the loop)
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "${SLURM_SUBMIT_DIR:-.}/batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: submit BUILD/batch/train.sh or PREFIX/share/hpckit/batch/train.sh, or set HPC_BATCH_DIR" >&2; exit 1; }

args=("$@")
out=$(hpc_option out o "$@")
[ -n "$out" ] && RUN_DIR=$out
echo "== job ${SLURM_JOB_ID:-local} (restart ${SLURM_RESTART_COUNT:-0})"
hpc_run_dir train "${args[@]}" || exit 1
[ -n "$out" ] || args+=(--out "$RUN_DIR")
# a requeued run continues from the checkpoint; the first starts afresh
# (or resumes, if the user said --resume)
if [ "${SLURM_RESTART_COUNT:-0}" != 0 ] && [ -e "$RUN_DIR/checkpoint.h5" ]; then
    case " ${args[*]} " in *" --resume "*) ;; *) args+=(--resume) ;; esac
fi
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
hpc_srun_stoppable train "${args[@]}"
rc=$?
# outside Slurm the same command would be refused (the checkpoint exists):
# the advice is this script again with the run folder and --resume (and
# without --force, which --resume refuses)
cont=()
for a in "${args[@]}"; do [ "$a" = --force ] || [ "$a" = --resume ] || cont+=("$a"); done
cont+=(--resume)
hpc_requeue_if_stopped $rc "$RUN_DIR/checkpoint.h5" bash "$0" "${cont[@]}"
exit $rc
