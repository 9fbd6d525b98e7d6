#!/bin/bash
#SBATCH --job-name=hpc-collbench
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=1
#SBATCH --time=00:30:00
#SBATCH --exclusive
#SBATCH --output=%x-%j.out
##SBATCH --gpus-per-task=1            (with --mem cuda: remove one '#')
#
# Collective bandwidth of this allocation, every algorithm beside MPI's own
# (and NCCL's); hpc-collbench's options, unchanged.  The table, a CSV and a
# plot go to the run folder (runs/JOBNAME-JOBID, or RUN_DIR) unless the
# options name other files.
#
#   sbatch batch/collbench.sh -c allreduce -b 8 -e 256M -f 4 --check
#   sbatch batch/collbench.sh --tune=tuning.txt        (then HPC_COLL_TUNING=tuning.txt)
#   bash batch/collbench.sh -c bcast                   (no Slurm: local cores)
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
# shellcheck source-path=SCRIPTDIR source=common.sh # (found at run time: the loop)
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "${SLURM_SUBMIT_DIR:-.}/batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: submit BUILD/batch/collbench.sh or PREFIX/share/hpckit/batch/collbench.sh, or set HPC_BATCH_DIR" >&2; exit 1; }

hpc_run_dir collbench "$@" || exit 1
extra=()
case " $* " in *" --csv "*|*" --csv="*) ;; *) extra+=(--csv "$RUN_DIR/collbench.csv") ;; esac
case " $* " in *" --plot "*|*" --plot="*) ;; *) command -v gnuplot >/dev/null 2>&1 && extra+=(--plot "$RUN_DIR/collbench.png") ;; esac
hpc_srun collbench "$@" "${extra[@]}" | tee "$RUN_DIR/collbench.txt"
exit "${PIPESTATUS[0]}"
