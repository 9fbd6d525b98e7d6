#!/bin/sh
# train_ranks.sh - data parallelism does not change the training: on an
# hpc-odegen file, the loss of every one of 200 steps at 2, 3 and 4 ranks
# (uneven slices of the batch at 3 and 4; several gradient buckets)
# equals the 1-rank run's within 1e-5 relative - float32 reduction order
# is the only difference - and every rank holds the same parameters
# (--check-sync every 50 steps); --accum 2 with half the batch is the
# same training too, and --preload gives the very same bits as reading
# each rank's samples from the file a few batches at a time.
. "$top_srcdir/tests/train_lib.sh"
"$ODEGEN" -q -n 60 --nt 21 --out "$T/ode.h5" || fail "making the data"
args="--data $T/ode.h5 --layers 11,32,32,10 --steps 200 --log-every 1 --check-sync 50 --bucket-mb 0.002 -q"

train 1 $args --out "$T/np1" --batch 50 || fail "1 rank"
[ "$(losses "$T/np1" | wc -l)" = 200 ] || fail "not 200 steps"
# the loss went down: the run is training, not comparing noise
losses "$T/np1" | awk 'NR == 1 { a = $2 } END { exit !($2 < a / 2) }' || fail "the loss did not halve"

for np in 2 3 4; do
    train $np $args --out "$T/np$np" --batch 50 || fail "$np ranks"
    close "$T/np1" "$T/np$np" "$np ranks" 1e-5
done
train 1 $args --out "$T/accum" --batch 25 --accum 2 || fail "--accum 2"
close "$T/np1" "$T/accum" "--accum 2 x batch 25" 1e-5
# windows of 3 micro-batches: 200 steps cross many windows and epochs
HPC_TRAIN_TEST_WINDOW=3 train 2 $args --out "$T/np2" --batch 50 --force || fail "windows of 3"
train 2 $args --out "$T/pre" --batch 50 --preload || fail "--preload"
losses "$T/np2" > "$T/a"
losses "$T/pre" > "$T/b"
cmp -s "$T/a" "$T/b" || fail "--preload differs from reading the file"
echo "ok: --preload and windows of 3 batches: the same losses bit for bit"
echo "train_ranks: 1-4 ranks train alike"
