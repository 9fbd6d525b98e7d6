#!/bin/sh
# train_pipe_hybrid.sh - more of what pipelines must keep, on the data and
# model of train_pipe.sh, 100 steps against the 1-rank dp run within 1e-5
# relative: hybrid, D = 2 replicas x S = 2 stages on 4 ranks (each stage's
# gradients allreduced over the replicas during backward); --clip 0.5 at
# S = 3 (the norm over every stage's gradient; it clips: the run differs
# from an unclipped one); and 1f1b holds fewer micro-batches of
# activations than gpipe on the first stage (the summary's peak
# activations at S = 4, M = 5), with timeline.csv and the checkpoint
# written.
. "$top_srcdir/tests/train_lib.sh"
"$ODEGEN" -q -n 60 --nt 21 --out "$T/ode.h5" || fail "making the data"
args="--data $T/ode.h5 --layers 11,32,32,32,10 --steps 100 --log-every 1 --check-sync 50 --batch 47 -q"

pipe="--parallel pipe --micro 5"
train 1 $args --out "$T/np1" || fail "1 rank"
train 4 $args --parallel hybrid --stages 2 --micro 3 --out "$T/hybrid" || fail "hybrid"
close "$T/np1" "$T/hybrid" "hybrid D = 2 x S = 2, M = 3" 1e-5
# clipping to the norm of every stage's gradient together
train 1 $args --clip 0.5 --out "$T/clip1" || fail "1 rank, --clip"
train 3 $args $pipe --clip 0.5 --out "$T/clip3" || fail "1f1b, --clip"
close "$T/clip1" "$T/clip3" "--clip 0.5: 1f1b, S = 3, M = 5" 1e-5
losses "$T/np1" > "$T/a"
losses "$T/clip1" > "$T/b"
! cmp -s "$T/a" "$T/b" || fail "--clip 0.5 clipped nothing: the test is void"

# peak activations of stage 0: 1f1b holds at most S micro-batches, gpipe M
for sched in gpipe 1f1b; do
    train 4 --data "$T/ode.h5" --layers 11,32,32,32,10 --steps 3 --batch 47 $pipe --pipe-schedule $sched \
        --out "$T/mem-$sched" > "$T/mem-$sched.out" || fail "$sched summary run"
    sed -n 's/.*peak activations \([0-9.]*\) KiB.*/\1/p' "$T/mem-$sched.out" > "$T/mem-$sched.kib"
    [ -s "$T/mem-$sched.kib" ] || { cat "$T/mem-$sched.out"; fail "$sched: no peak activations in the summary"; }
done
awk -v g="$(cat "$T/mem-gpipe.kib")" -v f="$(cat "$T/mem-1f1b.kib")" 'BEGIN { exit !(f < g) }' ||
    fail "1f1b's stage 0 holds $(cat "$T/mem-1f1b.kib") KiB of activations, gpipe's $(cat "$T/mem-gpipe.kib") KiB"
echo "ok: peak activations of stage 0 at S = 4, M = 5: 1f1b $(cat "$T/mem-1f1b.kib") KiB, gpipe $(cat "$T/mem-gpipe.kib") KiB"
for f in timeline.csv checkpoint.h5; do [ -s "$T/mem-1f1b/$f" ] || fail "no $f"; done
echo "train_pipe_hybrid: replicas, clipping and 1f1b's memory"
