#!/bin/sh
# train_pipe.sh - pipeline parallelism does not change the training: on
# an hpc-odegen file, 100 steps of gpipe and 1f1b at S = 2, 3 and 4 stages
# (uneven --partition 3,1 at S = 2, the balanced default at S = 3, one
# layer a stage at S = 4; M = 5 micro-batches, not a multiple of S, of
# uneven sizes: a batch of 47) give every step's loss within 1e-5
# relative of the 1-rank data-parallel run, and the stages' layers,
# gathered, are the same on every rank (--check-sync); seq with
# --recompute too.  (Hybrid, --clip and the activations:
# train_pipe_hybrid.sh.)
. "$top_srcdir/tests/train_lib.sh"
"$ODEGEN" -q -n 60 --nt 21 --out "$T/ode.h5" || fail "making the data"
args="--data $T/ode.h5 --layers 11,32,32,32,10 --steps 100 --log-every 1 --check-sync 50 --batch 47 -q"

train 1 $args --out "$T/np1" || fail "1 rank"
[ "$(losses "$T/np1" | wc -l)" = 100 ] || fail "not 100 steps"
losses "$T/np1" | awk 'NR == 1 { a = $2 } END { exit !($2 < a / 2) }' || fail "the loss did not halve"

pipe="--parallel pipe --micro 5"
for sched in gpipe 1f1b; do
    train 2 $args $pipe --pipe-schedule $sched --partition 3,1 --out "$T/$sched-2" || fail "$sched at S = 2"
    close "$T/np1" "$T/$sched-2" "$sched, S = 2 (3,1), M = 5" 1e-5
    train 3 $args $pipe --pipe-schedule $sched --out "$T/$sched-3" || fail "$sched at S = 3"
    close "$T/np1" "$T/$sched-3" "$sched, S = 3 (balanced), M = 5" 1e-5
    train 4 $args $pipe --pipe-schedule $sched --out "$T/$sched-4" > "$T/$sched.out" || fail "$sched at S = 4"
    close "$T/np1" "$T/$sched-4" "$sched, S = 4, M = 5" 1e-5
done
train 2 $args $pipe --pipe-schedule seq --recompute --out "$T/seq" || fail "seq --recompute"
close "$T/np1" "$T/seq" "seq --recompute, S = 2, M = 5" 1e-5
echo "train_pipe: pipelines train as one rank does"
