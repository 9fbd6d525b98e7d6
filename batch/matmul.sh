#!/bin/bash
#SBATCH --job-name=hpc-matmul
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=4
#SBATCH --time=00:30:00
#SBATCH --output=%x-%j.out
##SBATCH --gpus-per-task=1            (with --device cuda: remove one '#')
#
# Distributed C = A B (SUMMA) with hpc-matmul; the program's own options,
# unchanged:
#
#   sbatch batch/matmul.sh --gen 16384,16384,16384 --verify
#   sbatch -N 4 batch/matmul.sh --a in.h5:/A --b in.h5:/B --out c.h5:/C
#   bash batch/matmul.sh --gen 2048,2048,2048 --verify   (no Slurm: local cores)
#
# The run folder (runs/JOBNAME-JOBID, or RUN_DIR) gets the command line and
# where the ranks ran; the job's log is %x-%j.out.
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
# shellcheck source-path=SCRIPTDIR source=common.sh # (found at run time: the loop)
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "${SLURM_SUBMIT_DIR:-.}/batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: submit BUILD/batch/matmul.sh or PREFIX/share/hpckit/batch/matmul.sh, or set HPC_BATCH_DIR" >&2; exit 1; }

echo "== job ${SLURM_JOB_ID:-local}: ${SLURM_NTASKS:-local} tasks"
hpc_run_dir matmul "$@" || exit 1
# one BLAS thread per core a task owns
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
hpc_srun matmul "$@"
