#!/bin/bash
#SBATCH --job-name=hpc-info
#SBATCH --ntasks=2
#SBATCH --time=00:10:00
#SBATCH --output=hpc-info-%j.out
#
# Cluster self-check: where every rank runs and on which GPU, then every
# collective with every algorithm.  Submit from the hpckit folder:
#
#   sbatch batch/info.sh                   (2 tasks)
#   sbatch -N 2 --ntasks-per-node=4 --gpus-per-node=4 batch/info.sh
#
# Exit status: 0 when placement is sane and every collective passed.
set -eu
. "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}/batch/common.sh"

echo "== job ${SLURM_JOB_ID:-?}: ${SLURM_NTASKS:-?} tasks on ${SLURM_JOB_NODELIST:-?}"
hpc_srun info --selftest
