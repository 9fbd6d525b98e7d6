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
# A job array splits the trajectories: task I of N runs hpc-odegen
# --shard I/N with the same --out, which writes OUT-shardIIII-ofNNNN.h5
# (the initial conditions of its global indices), and task 0 submits a
# join job that runs after all of them and writes OUT as HDF5 virtual
# datasets over the shards, equal to one big run.  The tasks' ids must be
# MIN, MIN+S, ..., MAX: --array=0-7 (or 1-8, or 0-14:2) maps to shards
# 0..7.  A list such as --array=1,3,5 is refused (one line, exit 2):
# Slurm reports it as MIN 1, MAX 5, COUNT 3 and STEP 1, exactly as it
# reports 1,2,5, so which shard a task holds cannot be known - submit
# --array=0-2 instead.  To redo one shard (a task that failed), name it:
# sbatch batch/odegen.sh --shard 3/8 --out ode.h5 ..., then
# sbatch batch/odegen.sh --join 8 --out ode.h5.  HPC_ODEGEN_JOIN=0 in the
# tasks' environment: no join job (pipeline.sh submits its own, so the
# next step can depend on it).
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
# shellcheck source-path=SCRIPTDIR source=common.sh # (found at run time: the loop)
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "${SLURM_SUBMIT_DIR:-.}/batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: submit BUILD/batch/odegen.sh or PREFIX/share/hpckit/batch/odegen.sh, or set HPC_BATCH_DIR" >&2; exit 1; }

# array_shard: this task's shard of the array as "I N", or one line and
# failure unless Slurm's figures prove the ids are MIN, MIN+STEP, ... MAX
array_shard() {
    n=$SLURM_ARRAY_TASK_COUNT id=$SLURM_ARRAY_TASK_ID min=${SLURM_ARRAY_TASK_MIN:-}
    max=${SLURM_ARRAY_TASK_MAX:-} step=${SLURM_ARRAY_TASK_STEP:-1}
    if [ -z "$min" ] || [ -z "$max" ] || [ "$step" -lt 1 ] || [ $((max - min)) -ne $((step * (n - 1))) ] ||
       [ $(((id - min) % step)) -ne 0 ] || [ "$id" -lt "$min" ] || [ "$id" -gt "$max" ]; then
        echo "batch/odegen.sh: cannot tell task $id's shard: Slurm gives the job array as $n tasks from" \
             "${min:-?} to ${max:-?} with step $step, not a plain range; submit the shards as --array=0-$((n - 1))" >&2
        return 1
    fi
    echo "$(((id - min) / step)) $n"
}

# the output, and in a job array this task's shard of it
args=("$@")
out=$(hpc_option out o "$@")
[ -n "$out" ] || { echo "batch/odegen.sh: --out FILE.h5 is required (the program's own options)" >&2; exit 2; }
join=0
case " ${args[*]} " in *" --join "*) join=1 ;; esac
# (the join job inherits the array's variables from the task that submitted it)
if [ "$join" = 0 ] && [ -n "${SLURM_ARRAY_TASK_COUNT:-}" ] && [ "${SLURM_ARRAY_TASK_COUNT}" -gt 1 ]; then
    # the array's variables without the job's: a copied environment
    if [ -z "${SLURM_JOB_ID:-}" ] || [ -z "${SLURM_ARRAY_JOB_ID:-}" ] || [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
        echo "batch/odegen.sh: SLURM_ARRAY_TASK_COUNT=$SLURM_ARRAY_TASK_COUNT, but this is not a task of a Slurm job" \
             "array (no SLURM_JOB_ID, SLURM_ARRAY_JOB_ID or SLURM_ARRAY_TASK_ID): submit it with sbatch --array, or" \
             "run one shard with --shard I/N" >&2
        exit 2
    fi
    sn=$(array_shard) || exit 2
    shard=${sn% *} n=${sn#* }
    args+=(--shard "$shard/$n")
    if [ "$shard" = 0 ] && [ "${SLURM_RESTART_COUNT:-0}" = 0 ] && [ "${HPC_ODEGEN_JOIN:-1}" != 0 ]; then
        jid=$(sbatch --parsable --dependency="afterok:$SLURM_ARRAY_JOB_ID" --job-name="${SLURM_JOB_NAME:-hpc-odegen}-join" \
               --nodes=1 --ntasks-per-node=1 --cpus-per-task=1 --time=00:10:00 --output="${SLURM_JOB_NAME:-hpc-odegen}-join-%j.out" \
               --chdir="$hpc_top" "${HPC_BATCH_DIR:-$hpc_top/batch}/odegen.sh" --join "$n" --out "$out") &&
            echo "== join job $jid writes $out once every shard is done"
    fi
fi
# with --shard I/N (the array's, or the user's), the file hpc-odegen
# writes (its ode_shard_name), watched for progress before a requeue
sh=$(hpc_option shard "" "${args[@]}")
if [[ $sh =~ ^[0-9]{1,7}/[0-9]{1,7}$ ]]; then
    base=${out%.h5}
    out=$(printf '%s-shard%04d-of%04d%s' "$base" "$((10#${sh%/*}))" "$((10#${sh#*/}))" "$([ "$base" != "$out" ] && echo .h5)")
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
