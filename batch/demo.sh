#!/bin/sh
# demo.sh - build hpckit and run its pipeline on this machine: where the
# ranks run (hpc-info), an ODE dataset (hpc-odegen), a network trained on it
# with its loss plot (hpc-train), a verified distributed matrix product
# (hpc-matmul); then where every output and plot is.
#
#   batch/demo.sh [--slurm] [NRANKS [RUNDIR]]
#       (default 2 local ranks, ${TMPDIR:-/tmp}/hpckit-demo)
#
# --slurm runs the same steps as chained Slurm jobs (batch/pipeline.sh) on
# a private Slurm started for the demo (slurmctld + slurmd on this machine,
# as the tests start it; needs root).  Installs missing Debian packages (as
# root), builds with MPICH in _build/mpich; writes nothing into the source
# tree.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
slurm=0
[ "${1:-}" = --slurm ] && { slurm=1; shift; }
np=${1:-2}
run=${2:-${TMPDIR:-/tmp}/hpckit-demo}
sh batch/deps.sh mpich
[ -x configure ] || ./autogen.sh >/dev/null
b=_build/mpich
mkdir -p "$b"
[ -f "$b/Makefile" ] || (cd "$b" && MPICC=${MPICC:-mpicc.mpich} "$top/configure" -q)
make -C "$b" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
mkdir -p "$run"
run=$(cd "$run" && pwd)
t0=$(date +%s)

# the steps' options: small enough for a laptop, the same as on a cluster
ODEGEN="--out $run/ode.h5 -n 10000 --force"
TRAIN="--data $run/ode.h5 --out $run/train --epochs 3 --layers 11,64,64,10"
MATMUL="--gen 2048,2048,2048 --verify --out $run/c.h5:/C --force"

if [ "$slurm" = 1 ]; then
    echo "=== a private Slurm for the demo"
    # shellcheck source-path=SCRIPTDIR source=../tests/slurm/cluster.sh
    . "$top/tests/slurm/cluster.sh"
    slurm_start 4
    "$b/batch/pipeline.sh" --run "$run" --sbatch "--nodes=1 --ntasks-per-node=$np --cpus-per-task=1" \
        --odegen "$ODEGEN" --train "$TRAIN" --matmul "$MATMUL" | tee "$run/pipeline.log"
    last=$(sed -n 's/^== matmul: job \([0-9]*\).*/\1/p' "$run/pipeline.log")
    slurm_wait "$last" 600 || { echo "demo: the pipeline's jobs did not all complete" >&2; tail "$run"/*.out; exit 1; }
    cat "$run"/odegen-*.out "$run"/train-*.out "$run"/matmul-*.out | grep -E '^hpc-'
else
    mpiexec=$(sed -n 's/^MPIEXEC = //p' "$b/Makefile")
    echo "=== hpc-info on $np local ranks ($mpiexec -n $np)"
    $mpiexec -n "$np" "$b/apps/info/hpc-info"
    echo "=== hpc-odegen: the classic ODE dataset"
    # shellcheck disable=SC2086 # the options, word by word
    $mpiexec -n "$np" "$b/apps/odegen/hpc-odegen" $ODEGEN
    echo "=== hpc-train: a network learning the flow map of the dataset"
    # shellcheck disable=SC2086
    $mpiexec -n "$np" "$b/apps/train/hpc-train" $TRAIN
    echo "=== hpc-matmul: C = A B, checked by Freivalds' method"
    # shellcheck disable=SC2086
    $mpiexec -n "$np" "$b/apps/matmul/hpc-matmul" $MATMUL
fi
echo "=== done in $(( $(date +%s) - t0 )) s; outputs:"
for f in "$run/ode.h5" "$run/train/checkpoint.h5" "$run/train/metrics.csv" "$run/train/loss.png" "$run/c.h5"; do
    [ -e "$f" ] && printf '  %-52s %s\n' "$f" "$(du -h "$f" | cut -f1)"
done
