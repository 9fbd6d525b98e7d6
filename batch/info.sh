#!/bin/bash
#SBATCH --job-name=hpc-info
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=1
#SBATCH --time=00:10:00
#SBATCH --output=%x-%j.out
##SBATCH --gpus-per-task=1            (a GPU cluster: remove one '#')
#
# Cluster self-check: where every rank runs and on which GPU, then every
# collective with every algorithm; hpc-info's options, unchanged:
#
#   sbatch batch/info.sh
#   sbatch -N 2 --ntasks-per-node=4 --gpus-per-task=1 batch/info.sh --device
#   bash batch/info.sh                      (no Slurm: local cores)
#
# Exit status: 0 when placement is sane and every collective passed.
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
# shellcheck source-path=SCRIPTDIR source=common.sh # (found at run time: the loop)
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "${SLURM_SUBMIT_DIR:-.}/batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: submit BUILD/batch/info.sh or PREFIX/share/hpckit/batch/info.sh, or set HPC_BATCH_DIR" >&2; exit 1; }

echo "== job ${SLURM_JOB_ID:-local}: ${SLURM_NTASKS:-local} tasks on ${SLURM_JOB_NODELIST:-$(hostname)}"
hpc_srun info --selftest "$@"
