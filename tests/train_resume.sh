#!/bin/sh
# train_resume.sh - stopped and resumed runs end bit for bit where an
# uninterrupted run ends (model, optimiser state, the training columns of
# metrics.csv):
#   - on 2 ranks, the stop signal reaching rank 1 only (the test hook acts
#     as SIGUSR1 on that rank after step 37): every rank stops at the same
#     step - the next, 38: the vote travels while a step computes
#     (tests/train_stop.sh) - writes its checkpoint and exits 75; --resume
#     goes on;
#   - a real SIGUSR1 to a running 1-rank job, then --resume;
#   - resuming a finished run is a no-op; a 2-rank checkpoint resumes on
#     3 ranks (the same training within float32 rounding);
#   - a run started --init-from another run's checkpoint, stopped and
#     resumed with the same options, ends as its uninterrupted run; a
#     resume without --init-from is refused, naming it.
. "$top_srcdir/tests/train_lib.sh"
need_h5diff
"$MKDATA" regress "$T/r.h5" 600 || fail "making the data"
loud="--data $T/r.h5 --layers 4,24,24,2 --batch 40 --steps 120 --log-every 1 --ckpt-every 50 --eval-every 20"
args="$loud -q"
rows() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }

train 2 $args --out "$T/ref" || fail "reference run"

HPC_TRAIN_TEST_STOP=1:37 train 2 $args --out "$T/cut" 2> "$T/err"
rc=$?
[ $rc = 75 ] || { cat "$T/err"; fail "stopped run: exit $rc, expected 75"; }
grep -q "stopped by a signal after step 38 of 120" "$T/err" || { cat "$T/err"; fail "not stopped at step 38"; }
[ "$(grep -c . "$T/err")" = 1 ] || fail "stopped run: not one line"
[ "$(tail -n 1 "$T/cut/metrics.csv" | cut -d, -f1)" = 38 ] || fail "metrics go beyond the stop"
echo "ok: a signal on rank 1 only after step 37 stopped both ranks after step 38: $(cat "$T/err")"
train 2 $args --out "$T/cut" --resume || fail "resumed run"
same_run "$T/ref" "$T/cut" "stopped at 38 on one rank, resumed"

# a real signal to a running job (a singleton: its pid is the program's)
train 1 $args --out "$T/ref1" || fail "1-rank reference"
HPC_TRAIN_TEST_PACE=30 "$TRAIN" $args --out "$T/sig" 2> "$T/err" &
pid=$!
i=0
until [ "$(rows "$T/sig/metrics.csv")" -gt 10 ]; do
    i=$((i + 1)); [ $i -gt 600 ] && { kill $pid; fail "no progress in 60 s"; }
    sleep 0.1
done
kill -USR1 $pid
wait $pid
rc=$?
[ $rc = 75 ] || { cat "$T/err"; fail "SIGUSR1: exit $rc, expected 75"; }
stopped=$(tail -n 1 "$T/sig/metrics.csv" | cut -d, -f1)
[ "$stopped" -lt 120 ] || fail "SIGUSR1 came after the end"
echo "ok: SIGUSR1 stopped the run after step $stopped: $(cat "$T/err")"
train 1 $args --out "$T/sig" --resume || fail "resume after SIGUSR1"
same_run "$T/ref1" "$T/sig" "SIGUSR1 at step $stopped, resumed"

# a finished run resumed: nothing to do, nothing changed
cp "$T/sig/checkpoint.h5" "$T/done.h5"
train 1 $loud --out "$T/sig" --resume > "$T/out" || fail "resuming a finished run"
grep -q "nothing to do" "$T/out" || fail "a finished run resumed: no 'nothing to do'"
cmp -s "$T/done.h5" "$T/sig/checkpoint.h5" || fail "a finished run resumed changed its checkpoint"

# another rank count: allowed, the same training within rounding
HPC_TRAIN_TEST_STOP=0:50 train 2 $args --out "$T/re3" 2> /dev/null
[ $? = 75 ] || fail "stop at 50 for the 3-rank resume"
train 3 $args --out "$T/re3" --resume || fail "resumed on 3 ranks"
losses "$T/ref" > "$T/a"
losses "$T/re3" > "$T/b"
paste -d' ' "$T/a" "$T/b" | awk '{ d = $2 - $4; d = d < 0 ? -d : d; if (d > 1e-5 * $2) bad = 1 } END { exit bad }' ||
    fail "resumed on 3 ranks: losses beyond 1e-5"
echo "ok: a 2-rank checkpoint resumed on 3 ranks: losses within 1e-5"
# --init-from (here another run's checkpoint): it is part of the run
init="--init-from $T/ref1/checkpoint.h5"
train 2 $args $init --out "$T/iref" || fail "--init-from reference"
cmp -s "$T/ref/metrics.csv" "$T/iref/metrics.csv" && fail "--init-from: the same metrics as a fresh start"
HPC_TRAIN_TEST_STOP=0:40 train 2 $args $init --out "$T/icut" 2> /dev/null
[ $? = 75 ] || fail "--init-from: stop at 40"
train 2 $args --out "$T/icut" --resume 2> "$T/err"
[ $? = 1 ] && grep -q "init_from=$T/ref1/checkpoint.h5" "$T/err" ||
    { cat "$T/err"; fail "--resume without the run's --init-from: not refused naming it"; }
train 2 $args $init --out "$T/icut" --resume || fail "--init-from: resumed"
same_run "$T/iref" "$T/icut" "--init-from, stopped at 40, resumed"
echo "train_resume: interrupted runs end where uninterrupted ones do"
