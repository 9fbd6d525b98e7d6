#!/bin/sh
# train_pipe_resume.sh - checkpoints of a pipeline are those of data
# parallelism:
#   - a 1f1b run on 2 stages stopped by a signal on its last stage only
#     (test hook) after step 37 exits 75 on every rank; --resume ends bit
#     for bit where the uninterrupted pipeline ends (model, optimiser
#     state, metrics);
#   - each stage writes its own layers into the one file: the arrays of
#     the dp run's checkpoint, within 1e-4;
#   - a pipeline's checkpoint continues as a 1-rank dp run, and a dp
#     checkpoint as a 3-stage pipeline: the same losses as the
#     uninterrupted dp run within 1e-5;
#   - kill -9 of one stage's rank ends the whole job within 20 s, and
#     --resume from its last checkpoint ends where the uninterrupted run
#     does.
. "$top_srcdir/tests/train_lib.sh"
need_h5diff
"$MKDATA" regress "$T/r.h5" 600 || fail "making the data"
base="--data $T/r.h5 --layers 4,24,24,24,2 --batch 40 --steps 120 --log-every 1 --ckpt-every 50 -q"
pipe="$base --parallel pipe --micro 3 --pipe-schedule 1f1b"


train 2 $pipe --out "$T/ref" || fail "uninterrupted pipeline"
HPC_TRAIN_TEST_STOP=1:37 train 2 $pipe --out "$T/cut" 2> "$T/err"
rc=$?
[ $rc = 75 ] || { cat "$T/err"; fail "stopped pipeline: exit $rc, expected 75"; }
grep -q "stopped by a signal after step 37 of 120" "$T/err" || { cat "$T/err"; fail "not stopped at step 37"; }
train 2 $pipe --out "$T/cut" --resume || fail "resumed pipeline"
same_run "$T/ref" "$T/cut" "a pipeline stopped at 37 on its last stage, resumed"

train 1 $base --out "$T/dp" || fail "uninterrupted dp"
# the stages wrote their layers into the dp layout: the same arrays, the
# same values within float32 rounding of 120 steps
"$H5DIFF" -q -d 1e-4 "$T/ref/checkpoint.h5" "$T/dp/checkpoint.h5" /model /model ||
    fail "the pipeline's /model is not dp's"
"$H5DIFF" -q -d 1e-4 "$T/ref/checkpoint.h5" "$T/dp/checkpoint.h5" /optim /optim ||
    fail "the pipeline's /optim is not dp's"
echo "ok: the pipeline's checkpoint holds dp's arrays (within 1e-4)"
HPC_TRAIN_TEST_STOP=0:50 train 2 $pipe --out "$T/p2d" 2> /dev/null
[ $? = 75 ] || fail "pipeline stop at 50"
train 1 $base --out "$T/p2d" --resume || fail "dp resuming a pipeline's checkpoint"
close "$T/dp" "$T/p2d" "a pipeline's checkpoint continued by dp" 1e-5
HPC_TRAIN_TEST_STOP=0:50 train 1 $base --out "$T/d2p" 2> /dev/null
[ $? = 75 ] || fail "dp stop at 50"
train 3 $base --parallel pipe --micro 4 --out "$T/d2p" --resume || fail "a pipeline resuming dp's checkpoint"
close "$T/dp" "$T/d2p" "a dp checkpoint continued by a 3-stage pipeline" 1e-5

# kill -9 the last stage's rank of a running pipeline
descendants() {
    for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}
HPC_TRAIN_TEST_PACE=40 "$MPIEXEC_WRAP" -n 2 "$TRAIN" $pipe --ckpt-every 10 --out "$T/kill" > /dev/null 2>&1 &
job=$!
i=0
until [ -f "$T/kill/metrics.csv" ] && [ "$(wc -l < "$T/kill/metrics.csv")" -gt 25 ]; do
    i=$((i + 1)); [ $i -gt 600 ] && { kill $job; fail "no progress in 60 s"; }
    sleep 0.1
done
victim=
for p in $(descendants $job); do
    [ "$(ps -o comm= -p "$p")" = hpc-train ] && victim=$p
done
[ -n "$victim" ] || { kill $job; fail "no hpc-train rank found"; }
t0=$(date +%s)
kill -9 "$victim"
wait $job
rc=$?
dt=$(($(date +%s) - t0))
[ $rc != 0 ] || fail "the job survived the kill of a rank"
[ $dt -le 20 ] || fail "the job took $dt s to end after the kill of a rank"
echo "ok: kill -9 of a stage's rank ended the job in $dt s (exit $rc)"
train 2 $pipe --ckpt-every 10 --out "$T/kill" --resume || fail "resuming the killed run"
same_run "$T/ref" "$T/kill" "a pipeline killed, resumed from its last checkpoint"
echo "train_pipe_resume: pipelines stop, die and resume as dp does"
