#!/bin/sh
# bench_pipe.sh - every parallel strategy of hpc-train on the same model
# and data, measured in one run on the same machine.
#
#   apps/train/bench_pipe.sh [BUILD_DIR [OUT_DIR]]
#
# On the flow-map pairs of an hpc-odegen file (TRAJ trajectories, held in
# memory with --preload), LAYERS (default 11,1024,1024,1024,1024,1024,10: four
# equal GEMMs, so two or four stages balance, dominate the messages), tanh, MSE, Adam, global batch BATCH
# (default 1024) in MICRO (default 8) micro-batches, STEPS steps (default
# 200; so every strategy sees the same samples), one BLAS thread per
# rank.  At S = 2 and 4 stages (STAGES; 4 ranks on a 2-core machine are
# oversubscribed: right for correctness, not for speed) it runs
#   dp                          the same ranks, data-parallel
#   seq, gpipe, 1f1b            the flushed pipelines
#   stale, +stashing, +msnag, +gap-aware   the stale pipeline
#   stale --step-every 2        updates every second backward (the
#                               optimiser's pass halved: its share of a
#                               micro-batch is what keeps stale under 2x)
# REPEAT rounds (default 1; interleaved, so load changes hit all alike)
# and prints a table: samples/s (the median over the rounds of the
# median over windows of LOG steps, the first left out), against seq's,
# the bubble (wall clock, and the recorded steps
# replayed; theory), peak activations of stage 0, the share of the wall
# clock each stage spent in optimiser steps inside the stream (stale
# schedules: part of the measured bubble), and the validation
# loss at the end (the same number of samples for all).  OUT_DIR (default
# .) receives bench_pipe.txt (the table) and bench_pipe.png: the loss
# against samples of every strategy in one plot (gnuplot).  Environment:
# LAYERS, BATCH, MICRO, STEPS, LOG (default 20), TRAJ (default 1000),
# STAGES (default "2 4"), REPEAT, MPIEXEC (default: the launcher configure chose,
# tests/mpiexec-wrap), TMPDIR (scratch, deleted).
set -e
build=${1:-.}
out=${2:-.}
here=$(dirname "$0")
. "$here/bench_lib.sh"
LAYERS=${LAYERS:-11,1024,1024,1024,1024,1024,10}
BATCH=${BATCH:-1024}
MICRO=${MICRO:-8}
STEPS=${STEPS:-200}
LOG=${LOG:-20}
TRAJ=${TRAJ:-1000}
STAGES=${STAGES:-2 4}
REPEAT=${REPEAT:-1}
mkdir -p "$out"

"$odegen" -q -n "$TRAJ" --out "$dir/ode.h5"
args="--data $dir/ode.h5 --layers $LAYERS --act tanh --loss mse --optim adam --lr 1e-3 --batch $BATCH
      --steps $STEPS --preload --log-every $LOG --eval-every $LOG --ckpt-every 0 --force"

# run NAME NP OPTIONS...: one run; its rate appended to NAME.rates, its
# summary and metrics kept (the last round's)
run() {
    name=$1 np=$2
    shift 2
    $MPIEXEC "$np" "$prog" $args --out "$dir/$name" "$@" > "$dir/$name.out"
    rates "$dir/$name/metrics.csv" | median >> "$dir/$name.rates"
    [ "$r" != 1 ] || echo "$name" >> "$dir/names"
}

# row NAME NP SEQ: its line of the table, the rate against seq's (SEQ)
row() {
    line=$(cat "$dir/$1.out")
    rate=$(median < "$dir/$1.rates")
    bubble=$(echo "$line" | sed -n 's/.*bubble \([0-9.]*%\) (theory \([0-9.]*%\), \([0-9.]*%\) replayed).*/\1 \3 \2/p')
    mem=$(echo "$line" | sed -n 's/.*peak activations \([0-9.]* [KMG]*i*B\).*/\1/p' | tr -d ' ')
    upd=$(echo "$line" | sed -n 's/.*(optimiser steps \([0-9.%/]*\)).*/\1/p')
    val=$(echo "$line" | sed -n 's/.*val loss \([0-9.e+-]*\)[ ;].*/\1/p')
    printf "%-26s %2s %12.0f %6.2f   %-22s %-10s %-12s %s\n" "$1" "$2" "${rate:-0}" \
        "$(echo "${rate:-0} ${3:-0}" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')" "${bubble:--}" "${mem:--}" \
        "${upd:--}" "$val" | tee -a "$dir/table"
}

{
    echo "bench_pipe.sh: $LAYERS tanh, MSE, Adam, batch $BATCH in $MICRO micro-batches, $STEPS steps" \
         "($((STEPS * BATCH)) samples), 1 BLAS thread a rank, $REPEAT rounds; $(getconf _NPROCESSORS_ONLN)" \
         "cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    printf "%-26s %2s %12s %6s   %-22s %-10s %-12s %s\n" strategy np samples/s "x seq" "bubble meas/repl/theory" \
        "act.stage0" "optimiser" "val loss"
} | tee "$dir/head"
: > "$dir/table"
: > "$dir/names"
for S in $STAGES; do
    p="--parallel pipe --stages $S --micro $MICRO"
    for r in $(seq "$REPEAT"); do
        run "dp-$S" "$S"
        run "seq-$S" "$S" $p --pipe-schedule seq
        run "gpipe-$S" "$S" $p --pipe-schedule gpipe
        run "1f1b-$S" "$S" $p --pipe-schedule 1f1b
        run "stale-$S" "$S" $p --pipe-schedule stale
        run "stale-ws-$S" "$S" $p --pipe-schedule stale --weight-stashing
        run "stale-msnag-$S" "$S" $p --pipe-schedule stale --weight-prediction msnag
        run "stale-ws-ga-$S" "$S" $p --pipe-schedule stale --weight-stashing --gap-aware
        run "stale-k2-$S" "$S" $p --pipe-schedule stale --step-every 2
    done
    seq_rate=$(median < "$dir/seq-$S.rates")
    for n in $(grep -- "-$S\$" "$dir/names"); do row "$n" "$S" "$seq_rate"; done
done
cat "$dir/head" "$dir/table" > "$out/bench_pipe.txt"

# the loss against samples, every strategy in one plot
plot="set datafile separator ','; set terminal pngcairo size 1000,650; set output '$out/bench_pipe.png';"
plot="$plot set logscale y; set grid; set key outside right; set xlabel 'samples'; set ylabel 'validation loss';"
plot="$plot set title 'hpc-train: every strategy, the same model and data'; plot"
sep=
for n in $(cat "$dir/names"); do
    plot="$plot$sep '$dir/$n/metrics.csv' using (\$1*$BATCH):(\$5 > 0 ? \$5 : NaN) with linespoints title '$n'"
    sep=,
done
if command -v gnuplot > /dev/null; then
    gnuplot -e "$plot" && echo "bench_pipe.sh: $out/bench_pipe.txt, $out/bench_pipe.png"
else
    echo "bench_pipe.sh: $out/bench_pipe.txt (no gnuplot: no plot)"
fi
