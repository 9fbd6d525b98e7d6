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
# tree.  With HPC_BIN set (an install's bin/ or a build folder) it runs the
# programs there instead and builds nothing.  It runs any number of times:
# every step starts afresh over the previous run's outputs (--force).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
slurm=0
[ "${1:-}" = --slurm ] && { slurm=1; shift; }
np=${1:-2}
# the run folder and HPC_BIN as the caller named them, from the caller's folder
run=${2:-${TMPDIR:-/tmp}/hpckit-demo}
mkdir -p "$run"
run=$(cd "$run" && pwd)
[ -z "${HPC_BIN:-}" ] || HPC_BIN=$(cd "$HPC_BIN" && pwd)
cd "$top"
if [ -n "${HPC_BIN:-}" ]; then
    b=$HPC_BIN
else
    sh batch/deps.sh mpich
    [ -x configure ] || ./autogen.sh >/dev/null
    b=_build/mpich
    mkdir -p "$b"
    [ -f "$b/Makefile" ] || (cd "$b" && MPICC=${MPICC:-mpicc.mpich} "$top/configure" -q)
    make -C "$b" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
fi
# prog NAME: hpc-NAME in an install's bin/ or a build folder
prog() {
    for p in "$b/hpc-$1" "$b/apps/$1/hpc-$1"; do
        [ -x "$p" ] && { echo "$p"; return; }
    done
    echo "demo: hpc-$1 is not in $b" >&2
    exit 1
}
mpiexec=$(prog mpiexec)   # the launcher of the MPI the programs were built with
info=$(prog info) odegen=$(prog odegen) train=$(prog train) matmul=$(prog matmul)
t0=$(date +%s)

# the steps' options: small enough for a laptop, the same as on a cluster
ODEGEN="--out $run/ode.h5 -n 10000 --force"
TRAIN="--data $run/ode.h5 --out $run/train --epochs 3 --layers 11,64,64,10 --force"
MATMUL="--gen 2048,2048,2048 --verify --out $run/c.h5:/C --force"

if [ "$slurm" = 1 ]; then
    echo "=== a private Slurm for the demo"
    # shellcheck source-path=SCRIPTDIR source=../tests/slurm/cluster.sh
    . "$top/tests/slurm/cluster.sh"
    slurm_start 4
    pipeline=$b/batch/pipeline.sh
    [ -x "$pipeline" ] || pipeline=$b/../share/hpckit/batch/pipeline.sh
    "$pipeline" --run "$run" --sbatch "--nodes=1 --ntasks-per-node=$np --cpus-per-task=1" \
        --odegen "$ODEGEN" --train "$TRAIN" --matmul "$MATMUL" | tee "$run/pipeline.log"
    last=$(sed -n 's/^== matmul: job \([0-9]*\).*/\1/p' "$run/pipeline.log")
    slurm_wait "$last" 600 || { echo "demo: the pipeline's jobs did not all complete" >&2; tail "$run"/*.out; exit 1; }
    cat "$run"/odegen-*.out "$run"/train-*.out "$run"/matmul-*.out | grep -E '^hpc-'
else
    echo "=== hpc-info on $np local ranks (hpc-mpiexec -n $np)"
    "$mpiexec" -n "$np" "$info"
    echo "=== hpc-odegen: the classic ODE dataset"
    # shellcheck disable=SC2086 # the options, word by word
    "$mpiexec" -n "$np" "$odegen" $ODEGEN
    echo "=== hpc-train: a network learning the flow map of the dataset"
    # shellcheck disable=SC2086
    "$mpiexec" -n "$np" "$train" $TRAIN
    echo "=== hpc-matmul: C = A B, checked by Freivalds' method"
    # shellcheck disable=SC2086
    "$mpiexec" -n "$np" "$matmul" $MATMUL
fi
echo "=== done in $(( $(date +%s) - t0 )) s; outputs:"
for f in "$run/ode.h5" "$run/train/checkpoint.h5" "$run/train/metrics.csv" "$run/train/loss.png" "$run/c.h5"; do
    [ -e "$f" ] && printf '  %-52s %s\n' "$f" "$(du -h "$f" | cut -f1)"
done
