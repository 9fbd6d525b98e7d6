#!/bin/bash
# pipeline.sh - the odegen -> train -> matmul pipeline as chained jobs:
# each step is submitted with --dependency=afterok on the one before, so
# training starts when the dataset is complete.  Prints the job ids and the
# run folder.  Outside Slurm (or with --local) the steps run one after the
# other on local cores.
#
#   batch/pipeline.sh [--run DIR] [--chain odegen,train,matmul] [--local]
#                     [--odegen "ARGS"] [--odegen-array N]
#                     [--train "ARGS"] [--matmul "ARGS"]
#                     [--sbatch "SBATCH-OPTIONS for every step"]
#
# --odegen-array N: the dataset as a job array of N shards (--array=0-N-1)
# and a join job after it; the next step waits for the join, and reads
# the joined file like a plain one.
# Each step's own options replace its defaults:
#   odegen: --out DIR/ode.h5 -n 20000           (the classic example)
#   train:  --data DIR/ode.h5 --out DIR/train --epochs 2
#   matmul: --gen 1024,1024,1024 --verify --out DIR/c.h5:/C
# sbatch options for every step: --sbatch "-p gpu -A myproject -N 2", or
# SBATCH_* variables (SBATCH_PARTITION, SBATCH_ACCOUNT, ...).
# Every step runs in the run folder (sbatch --chdir=DIR, or cd DIR
# outside Slurm): relative paths in a step's ARGS are taken from there,
# not from where you run pipeline.sh (--out ode.h5 is DIR/ode.h5).
# A step that fails cancels the steps after it (--kill-on-invalid-dep=yes:
# Slurm would otherwise keep them pending for ever, DependencyNeverSatisfied).
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
# shellcheck source-path=SCRIPTDIR source=common.sh # (found at run time: the loop)
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "./batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && here=$d && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: run BUILD/batch/pipeline.sh or PREFIX/share/hpckit/batch/pipeline.sh, or set HPC_BATCH_DIR" >&2; exit 1; }
here=$(cd "$here" && pwd)

run=runs/pipeline-$(date +%Y%m%d-%H%M%S) chain=odegen,train,matmul local=0
odegen_args='' train_args='' matmul_args='' sbatch_args='' odegen_array=0
# value OPTION ARGS...: OPTION has its value, or one line and exit 2
value() { [ $# -ge 2 ] || { echo "pipeline.sh: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
    case $1 in
    --run) value "$@"; run=$2; shift ;;
    --chain) value "$@"; chain=$2; shift ;;
    --local) local=1 ;;
    --odegen) value "$@"; odegen_args=$2; shift ;;
    --odegen-array) value "$@"; odegen_array=$2; shift ;;
    --train) value "$@"; train_args=$2; shift ;;
    --matmul) value "$@"; matmul_args=$2; shift ;;
    --sbatch) value "$@"; sbatch_args=$2; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "pipeline.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
# the whole chain checked before any step runs or is submitted
[ -n "${chain//[ ,]/}" ] || { echo "pipeline.sh: --chain names no step (odegen, train, matmul)" >&2; exit 2; }
for step in ${chain//,/ }; do
    case $step in
    odegen | train | matmul) ;;
    *) echo "pipeline.sh: unknown step '$step' in --chain $chain (odegen, train, matmul); nothing was run" >&2; exit 2 ;;
    esac
done
command -v sbatch >/dev/null 2>&1 || local=1
[[ $odegen_array =~ ^[0-9]{1,4}$ ]] ||
    { echo "pipeline.sh: --odegen-array takes a number of shards, not '$odegen_array'" >&2; exit 2; }
[ "$odegen_array" -le 1 ] || [ "$local" = 0 ] ||
    { echo "pipeline.sh: --odegen-array needs Slurm (a job array); without it run odegen whole" >&2; exit 2; }
if ! mkdir -p "$run" || ! run=$(cd "$run" && pwd); then echo "pipeline.sh: cannot make $run" >&2; exit 1; fi
: "${odegen_args:=--out $run/ode.h5 -n 20000}"
: "${train_args:=--data $run/ode.h5 --out $run/train --epochs 2}"
: "${matmul_args:=--gen 1024,1024,1024 --verify --out $run/c.h5:/C}"
echo "== pipeline $chain, run folder $run (relative paths in the steps' options are taken from there)"

prev=
for step in ${chain//,/ }; do
    case $step in
    odegen) args=$odegen_args ;;
    train) args=$train_args ;;
    *) args=$matmul_args ;;
    esac
    if [ "$local" = 1 ]; then
        echo "== $step: $args"
        # shellcheck disable=SC2086
        (cd "$run" && RUN_DIR=$run/$step bash "$here/$step.sh" $args) || { echo "== $step failed" >&2; exit 1; }
    elif [ "$step" = odegen ] && [ "$odegen_array" -gt 1 ]; then
        # the shards, then the join (submitted here, not by task 0, so the
        # next step can wait for it)
        # shellcheck disable=SC2086
        prev=$(RUN_DIR=$run/$step HPC_ODEGEN_JOIN=0 sbatch --parsable --chdir="$run" --output="$run/$step-%A_%a.out" \
               $sbatch_args --array=0-$((odegen_array - 1)) ${prev:+--dependency=afterok:$prev --kill-on-invalid-dep=yes} --job-name="hpc-$step" \
               "$here/$step.sh" $args) || { echo "pipeline.sh: sbatch of $step failed" >&2; exit 1; }
        echo "== $step: job array $prev, $odegen_array shards${args:+ ($args)}"
        # shellcheck disable=SC2086 # the step's options, word by word
        out=$(hpc_option out o $args)
        # shellcheck disable=SC2086
        prev=$(RUN_DIR=$run/$step-join sbatch --parsable --chdir="$run" --output="$run/$step-join-%j.out" $sbatch_args \
               --nodes=1 --ntasks-per-node=1 --dependency=afterok:$prev --kill-on-invalid-dep=yes --job-name="hpc-$step-join" \
               "$here/$step.sh" --join "$odegen_array" --out "$out") || { echo "pipeline.sh: sbatch of the join failed" >&2; exit 1; }
        echo "== $step-join: job $prev (--join $odegen_array --out $out)"
    else
        # shellcheck disable=SC2086
        prev=$(RUN_DIR=$run/$step sbatch --parsable --chdir="$run" --output="$run/$step-%j.out" $sbatch_args \
               ${prev:+--dependency=afterok:$prev --kill-on-invalid-dep=yes} --job-name="hpc-$step" "$here/$step.sh" $args) ||
            { echo "pipeline.sh: sbatch of $step failed" >&2; exit 1; }
        echo "== $step: job $prev${args:+ ($args)}"
    fi
done
[ "$local" = 1 ] && echo "== done: $run" || echo "== last job $prev; outputs in $run"
