#!/bin/sh
# train_stop.sh - data parallelism's stop vote travels while the next step
# computes (issue 29.3: no blocking agreement after each step), and still
# stops every rank at the same step:
#   - 3 ranks, the signal on rank 2 only after step 20 (the test hook acts
#     as SIGUSR1 there): every rank says it agreed to stop after step 21
#     (HPC_LOG=info, HPC_LOG_ALL=1), the run exits 75 with the checkpoint
#     of step 21, and --resume ends bit for bit where the uninterrupted
#     run ends;
#   - 2 ranks, the signal on rank 0 after the step before the last: the
#     vote lands on the last step, which finishes the run (exit 0, no
#     stop), on every rank alike.
. "$top_srcdir/tests/train_lib.sh"
need_h5diff
"$MKDATA" regress "$T/r.h5" 400 || fail "making the data"
args="--data $T/r.h5 --layers 4,16,2 --batch 30 --steps 40 --log-every 1 --ckpt-every 10 --bucket-mb 0.0005 -q"

train 3 $args --out "$T/ref" || fail "the uninterrupted run"
HPC_LOG=info HPC_LOG_ALL=1 HPC_TRAIN_TEST_STOP=2:20 train 3 $args --out "$T/cut" 2> "$T/err"
rc=$?
[ $rc = 75 ] || { cat "$T/err"; fail "3 ranks, signal on rank 2: exit $rc, expected 75"; }
for r in 0 1 2; do
    [ "$(grep -c "rank $r: stop agreed after step" "$T/err")" = 1 ] &&
        grep -q "rank $r: stop agreed after step 21$" "$T/err" ||
        { cat "$T/err"; fail "rank $r did not agree to stop after step 21 (once)"; }
done
grep -q "stopped by a signal after step 21 of 40" "$T/err" || { cat "$T/err"; fail "not the stop line of step 21"; }
[ "$(tail -n 1 "$T/cut/metrics.csv" | cut -d, -f1)" = 21 ] || fail "metrics.csv does not end at step 21"
echo "ok: a signal on rank 2 after step 20: ranks 0, 1 and 2 agreed to stop after step 21"
train 3 $args --out "$T/cut" --resume || fail "resuming the stopped run"
same_run "$T/ref" "$T/cut" "3 ranks stopped after step 21, resumed"

HPC_LOG=info HPC_LOG_ALL=1 HPC_TRAIN_TEST_STOP=0:39 train 2 $args --out "$T/last" 2> "$T/err" ||
    { cat "$T/err"; fail "a vote that lands on the last step: not a finished run"; }
grep -q "stop agreed" "$T/err" && { cat "$T/err"; fail "a stop agreed after the last step"; }
[ "$(tail -n 1 "$T/last/metrics.csv" | cut -d, -f1)" = 40 ] || fail "the run did not reach step 40"
echo "ok: a signal after step 39 of 40: the vote lands on step 40, the run finishes (exit 0)"
echo "train_stop: the deferred stop vote stops every rank at the same step"
