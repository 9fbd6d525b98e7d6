#!/bin/bash
# pipeline.sh - the odegen -> train -> matmul pipeline as chained jobs:
# each step is submitted with --dependency=afterok on the one before, so
# training starts when the dataset is complete.  Prints the job ids and the
# run folder.  Outside Slurm (or with --local) the steps run one after the
# other on local cores.
#
#   batch/pipeline.sh [--run DIR] [--chain odegen,train,matmul] [--local]
#                     [--odegen "ARGS"] [--train "ARGS"] [--matmul "ARGS"]
#                     [--sbatch "SBATCH-OPTIONS for every step"]
#
# Each step's own options replace its defaults:
#   odegen: --out DIR/ode.h5 -n 20000           (the classic example)
#   train:  --data DIR/ode.h5 --out DIR/train --epochs 2
#   matmul: --gen 1024,1024,1024 --verify --out DIR/c.h5:/C
# sbatch options for every step: --sbatch "-p gpu -A myproject -N 2", or
# SBATCH_* variables (SBATCH_PARTITION, SBATCH_ACCOUNT, ...).
set -u
HPC_BATCH_DIR=${HPC_BATCH_DIR:-}
for d in "$HPC_BATCH_DIR" "$(dirname "$0")" "./batch"; do [ -f "$d/common.sh" ] && . "$d/common.sh" && here=$d && break; done
type hpc_prog >/dev/null 2>&1 || { echo "batch: common.sh not found: run BUILD/batch/pipeline.sh or PREFIX/share/hpckit/batch/pipeline.sh, or set HPC_BATCH_DIR" >&2; exit 1; }
here=$(cd "$here" && pwd)

run=runs/pipeline-$(date +%Y%m%d-%H%M%S) chain=odegen,train,matmul local=0
odegen_args= train_args= matmul_args= sbatch_args=
while [ $# -gt 0 ]; do
    case $1 in
    --run) run=$2; shift ;;
    --chain) chain=$2; shift ;;
    --local) local=1 ;;
    --odegen) odegen_args=$2; shift ;;
    --train) train_args=$2; shift ;;
    --matmul) matmul_args=$2; shift ;;
    --sbatch) sbatch_args=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "pipeline.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
command -v sbatch >/dev/null 2>&1 || local=1
mkdir -p "$run" && run=$(cd "$run" && pwd) || { echo "pipeline.sh: cannot make $run" >&2; exit 1; }
: "${odegen_args:=--out $run/ode.h5 -n 20000}"
: "${train_args:=--data $run/ode.h5 --out $run/train --epochs 2}"
: "${matmul_args:=--gen 1024,1024,1024 --verify --out $run/c.h5:/C}"
echo "== pipeline $chain, run folder $run"

prev=
for step in ${chain//,/ }; do
    case $step in
    odegen) args=$odegen_args ;;
    train) args=$train_args ;;
    matmul) args=$matmul_args ;;
    *) echo "pipeline.sh: unknown step '$step' (odegen, train, matmul)" >&2; exit 2 ;;
    esac
    if [ "$local" = 1 ]; then
        echo "== $step: $args"
        # shellcheck disable=SC2086
        RUN_DIR=$run/$step bash "$here/$step.sh" $args || { echo "== $step failed" >&2; exit 1; }
    else
        # shellcheck disable=SC2086
        prev=$(RUN_DIR=$run/$step sbatch --parsable --chdir="$run" --output="$run/$step-%j.out" $sbatch_args \
               ${prev:+--dependency=afterok:$prev} --job-name="hpc-$step" "$here/$step.sh" $args) ||
            { echo "pipeline.sh: sbatch of $step failed" >&2; exit 1; }
        echo "== $step: job $prev${args:+ ($args)}"
    fi
done
[ "$local" = 1 ] && echo "== done: $run" || echo "== last job $prev; outputs in $run"
