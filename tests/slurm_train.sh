#!/bin/sh
# slurm_train.sh - batch/train.sh (the build tree's copy, submitted from a
# folder outside the source tree) under a real Slurm: the job is signalled
# mid-run as at its time limit, hpc-train checkpoints and exits 75, the
# script requeues the job, and its second run resumes from the checkpoint;
# the final model and optimiser state equal an uninterrupted run's bit for
# bit (h5diff).  Skips (77) without Slurm or h5diff.
. "$top_srcdir/tests/slurm/cluster.sh"
. "$top_srcdir/tests/train_lib.sh"
need_h5diff
FAIL_SHOW=$T/job.out
step start
slurm_start 4
trap 'slurm_stop; rm -rf "$T"' EXIT
export HPC_PROGRESS=1
script=$(cd "$top_builddir" && pwd)/batch/train.sh
[ -x "$script" ] || fail "no $script (make builds the batch/ copies)"
"$ODEGEN" -q -n 40 --nt 11 --out "$T/ode.h5" || fail "making the data"
# the job (not the reference run) pauses 40 ms a step (HPC_TRAIN_TEST_PACE,
# passed on by sbatch's environment): 150 steps last >= 6 s however fast
# the machine, long enough to interrupt
args="--data $T/ode.h5 --layers 11,32,32,10 --batch 40 --steps 150 --log-every 1 --ckpt-every 100"

step "reference run"
train 2 $args --out "$T/ref" -q || fail "reference run"

step sbatch
job=$(cd "$T" && HPC_TRAIN_TEST_PACE=40 sbatch --parsable --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 -t 5 \
      -o "$T/job.out" "$script" $args --out "$T/run") || fail sbatch
# signal it as Slurm does before the time limit, once it is training
i=0
until [ -f "$T/run/metrics.csv" ] && [ "$(wc -l < "$T/run/metrics.csv")" -gt 10 ]; do
    i=$((i + 1))
    [ $i -gt 120 ] && fail "no progress from job $job in 60 s: $(squeue -h -j "$job" -o '%T %r')"
    sleep 0.5
done
step "USR1 to the batch script"
scancel --signal=USR1 --batch "$job" || fail "scancel --signal"
# Slurm holds a requeued job back (begin time = now + CredExpire) so that
# its last run can end first; once it is pending again and that run's
# batch folder is gone, let it start now
i=0
until scontrol -o show job "$job" | grep -q 'JobState=PENDING.*Restarts=1' && [ ! -e "$SLURM_DIR/spool/job$job" ]; do
    i=$((i + 1)); [ $i -gt 60 ] && fail "job $job was not requeued"; sleep 0.5
done
scontrol update JobId="$job" StartTime=now || fail "cannot release job $job"
step "wait for the second run"
slurm_wait "$job" 300 || fail "job $job: $(scontrol -o show job "$job" | grep -o 'JobState=[A-Z]* .*ExitCode=[0-9:]*')"
step done
grep -q 'stopped by a signal after step' "$T/job.out" || fail "hpc-train was not stopped by the signal"
grep -q 'requeueing job' "$T/job.out" || fail "the script did not requeue itself"
grep -q '(restart 1)' "$T/job.out" || fail "no second run"
grep -q 'resuming .* at step' "$T/job.out" || fail "the second run did not resume"
echo "ok: $(grep 'stopped by a signal' "$T/job.out")"
"$H5DIFF" -q "$T/ref/checkpoint.h5" "$T/run/checkpoint.h5" /model /model || fail "the final model differs"
"$H5DIFF" -q "$T/ref/checkpoint.h5" "$T/run/checkpoint.h5" /optim /optim || fail "the optimiser state differs"
echo "slurm_train.sh: all checks passed"
