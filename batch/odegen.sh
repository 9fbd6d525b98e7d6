#!/bin/bash
#SBATCH --job-name=hpc-odegen
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=16
#SBATCH --cpus-per-task=1
#SBATCH --time=01:00:00
#SBATCH --requeue
#SBATCH --signal=B:USR1@120
#SBATCH --output=%x-%j.out
#SBATCH --open-mode=append
#
# Generate an ODE dataset with hpc-odegen, surviving time limits; the
# program's own options, unchanged:
#
#   sbatch batch/odegen.sh --out ode.h5 -n 1000000 --system lorenz
#   sbatch -N 4 -t 4:00:00 batch/odegen.sh --out runs/lorenz.h5 --system lorenz -n 100000000
#   sbatch --array=0-7 batch/odegen.sh --out ode.h5 -n 8000000    (a job array)
#   bash batch/odegen.sh --out ode.h5 -n 10000                     (no Slurm: local cores)
#
# Two minutes before the time limit Slurm signals this script (--signal);
# it passes the signal on, hpc-odegen stops taking work, keeps OUT.partial
# and exits 75; the script requeues the job and the next run continues it
# (--resume), so the final file equals one uninterrupted run's bit for bit.
#
# A job array splits the trajectories: task I of N computes shard I/N into
# OUT-shardIIII-ofNNNN.h5 (the initial conditions of its global indices),
# and task 0 submits a join job that runs after all of them and writes OUT
# as HDF5 virtual datasets over the shards, equal to one big run.
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "${SLURM_SUBMIT_DIR:-.}/batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: submit BUILD/batch/odegen.sh or PREFIX/share/hpckit/batch/odegen.sh, or set HPC_BATCH_DIR" >&2; exit 1; }

# the output, and in a job array this task's shard of it
args=("$@")
out=$(hpc_option out o "$@")
[ -n "$out" ] || { echo "batch/odegen.sh: --out FILE.h5 is required (the program's own options)" >&2; exit 2; }
join=0
case " ${args[*]} " in *" --join "*) join=1 ;; esac
# (the join job inherits the array's variables from the task that submitted it)
if [ "$join" = 0 ] && [ -n "${SLURM_ARRAY_TASK_COUNT:-}" ] && [ "${SLURM_ARRAY_TASK_COUNT}" -gt 1 ]; then
    n=$SLURM_ARRAY_TASK_COUNT shard=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
    name=$(printf '%s-shard%04d-of%04d%s' "${out%.h5}" "$shard" "$n" "$([ "${out%.h5}" != "$out" ] && echo .h5)")
    for ((i = 0; i < ${#args[@]}; i++)); do
        case ${args[i]} in --out|-o) args[i + 1]=$name ;; --out=*) args[i]=--out=$name ;; esac
    done
    args+=(--shard "$shard/$n")
    if [ "$shard" = 0 ] && [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
        jid=$(sbatch --parsable --dependency=afterok:$SLURM_ARRAY_JOB_ID --job-name="${SLURM_JOB_NAME}-join" \
               --nodes=1 --ntasks-per-node=1 --cpus-per-task=1 --time=00:10:00 --output="${SLURM_JOB_NAME}-join-%j.out" \
               --chdir="$hpc_top" "${HPC_BATCH_DIR:-$hpc_top/batch}/odegen.sh" --join "$n" --out "$out") &&
            echo "== join job $jid writes $out once every shard is done"
    fi
    out=$name
fi
echo "== job ${SLURM_JOB_ID:-local} (restart ${SLURM_RESTART_COUNT:-0}), output $out"
hpc_run_dir odegen "${args[@]}" || exit 1
if [ "$join" = 1 ]; then
    hpc_srun odegen "${args[@]}"
    exit $?
fi
# every run is the same command: --resume (which starts afresh where there
# is no .partial), unless the first run was told to --force
if [ "${SLURM_RESTART_COUNT:-0}" != 0 ]; then
    kept=()
    for a in "${args[@]}"; do [ "$a" = --force ] || kept+=("$a"); done
    args=("${kept[@]}")
fi
case " ${args[*]} " in *" --force "*) ;; *) args+=(--resume) ;; esac
hpc_srun_stoppable odegen "${args[@]}"
rc=$?
hpc_requeue_if_stopped $rc "$out.partial"
exit $rc
