#!/bin/sh
# bench.sh - hpc-train next to PyTorch, measured in the same run on the
# same machine.
#
#   apps/train/bench.sh [BUILD_DIR]
#
# The issue's setting: 11 -> 256 -> 256 -> 10, tanh, MSE, Adam (lr 1e-3),
# global batch 256, one thread per rank, on the flow-map pairs of the
# classic hpc-odegen file (TRAJ trajectories x 100 pairs), held in memory
# (hpc-train --preload; PyTorch tensors).  Prints samples/s of
#   PyTorch       one process, torch.set_num_threads(1)
#   PyTorch DDP   2 processes (torch.multiprocessing), gloo, 128 each
#   hpc-train     1 and 2 ranks (OPENBLAS_NUM_THREADS=1), 2 ranks with
#                 small buckets (--bucket-mb 0.25: three buckets that start
#                 during backward), and 2 ranks agreeing on the stop after
#                 every step as before issue 29 (HPC_TRAIN_TEST_BLOCKING_STOP=1;
#                 now the vote travels while the next step computes)
# The first lines name the CPU and the BLAS kernel the figures are made
# with (hpc-info): compare figures only with the same kernel.
# Each figure is the median over REPEAT runs (interleaved, so load
# changes hit all alike) of the median rate over windows of 100 steps
# (the first window, warm-up, left out).  Environment: TRAJ (default
# 1000), STEPS per run (default 1200), REPEAT (default 3), PYTHON
# (default /usr/bin/python3), MPIEXEC (default: the launcher configure
# chose, from tests/mpiexec-wrap), TMPDIR (scratch, deleted).
set -e
build=${1:-.}
here=$(dirname "$0")
. "$here/bench_lib.sh"
TRAJ=${TRAJ:-1000}
STEPS=${STEPS:-1200}
REPEAT=${REPEAT:-3}

"$odegen" -q -n "$TRAJ" --out "$dir/ode.h5"
args="--data $dir/ode.h5 --layers 11,256,256,10 --act tanh --loss mse --optim adam --lr 1e-3 --batch 256
      --steps $STEPS --preload --log-every 100 --ckpt-every 0 --force -q"

# hpc NP [options]: the median of the windows' samples/s (rows after the
# first of metrics.csv)
hpc() {
    np=$1
    shift
    $MPIEXEC "$np" "$prog" $args --out "$dir/run" "$@"
    rates "$dir/run/metrics.csv" | median
}

# torch NP: the same model, data and batch with PyTorch (NP 2: DDP, gloo),
# apps/train/torch_bench.py
torch_rate() {
    "$PYTHON" "$here/torch_bench.py" "$dir/ode.h5" "$STEPS" "$1" --scratch "$dir" | cut -d' ' -f1
}

echo "bench.sh: 11-256-256-10 tanh, MSE, Adam, global batch 256, 1 thread per rank; $TRAJ trajectories" \
     "x 100 pairs, in memory; $STEPS steps a run, $REPEAT runs each, median; $(getconf _NPROCESSORS_ONLN) cores, load" \
     "$(cut -d' ' -f1-3 /proc/loadavg)"
# the machine and the BLAS kernel the figures are made with (issue 29)
"$build/apps/info/hpc-info" | grep -E '^(CPU|BLAS):'
for f in t1 t2 h1 h2 hb hs; do : > "$dir/$f"; done
for i in $(seq "$REPEAT"); do
    torch_rate 1 >> "$dir/t1"
    hpc 1 >> "$dir/h1"
    torch_rate 2 >> "$dir/t2"
    hpc 2 >> "$dir/h2"
    hpc 2 --bucket-mb 0.25 >> "$dir/hb"
    HPC_TRAIN_TEST_BLOCKING_STOP=1 hpc 2 >> "$dir/hs"
done
# one more 2-rank run of each kind for its summary line (communication,
# memory)
$MPIEXEC 2 "$prog" $(echo "$args" | sed 's/ -q//') --out "$dir/run" > "$dir/s2"
$MPIEXEC 2 "$prog" $(echo "$args" | sed 's/ -q//') --out "$dir/run" --bucket-mb 0.25 > "$dir/sb"
$MPIEXEC 1 "$prog" $(echo "$args" | sed 's/ -q//') --out "$dir/run" > "$dir/s1"
t1=$(median < "$dir/t1"); t2=$(median < "$dir/t2"); h1=$(median < "$dir/h1")
h2=$(median < "$dir/h2"); hb=$(median < "$dir/hb"); hs=$(median < "$dir/hs")
awk -v t1="$t1" -v t2="$t2" -v h1="$h1" -v h2="$h2" -v hb="$hb" -v hs="$hs" 'BEGIN {
    printf "PyTorch, 1 process:                %9.0f samples/s\n", t1
    printf "PyTorch DDP (gloo), 2 ranks:       %9.0f samples/s\n", t2
    printf "hpc-train, 1 rank:                 %9.0f samples/s = %.2fx PyTorch   (goal >= 1.2x)\n", h1, h1 / t1
    printf "hpc-train, 2 ranks:                %9.0f samples/s = %.2fx its 1 rank (goal >= 1.8x) = %.2fx DDP (goal >= 3x)\n", h2, h2 / h1, h2 / t2
    printf "hpc-train, 2 ranks, 0.25 MiB buckets: %6.0f samples/s = %.2fx its 1 rank\n", hb, hb / h1
    printf "hpc-train, 2 ranks, stop agreed after every step (before issue 29): %.0f samples/s = %.2fx its 1 rank\n", hs, hs / h1
}'
echo "summaries (one more run each):"
sed 's/^/  1 rank:  /' "$dir/s1"
sed 's/^/  2 ranks: /' "$dir/s2"
sed 's/^/  2 ranks, 0.25 MiB buckets: /' "$dir/sb"
