#!/bin/sh
# slurm_odegen.sh - batch/odegen.sh (the build tree's copy, submitted from
# a folder outside the source tree) under a real Slurm: the job is
# signalled mid-run as at its time limit, stops hpc-odegen (exit 75),
# requeues itself, and its second run resumes; the final file equals an
# uninterrupted run's bit for bit.  Skips (77) without Slurm or h5diff.
. "$top_srcdir/tests/slurm/cluster.sh"
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
FAIL_SHOW=$T/job.out
step start
slurm_start 4
trap 'slurm_stop; rm -rf "$T"' EXIT
export HPC_PROGRESS=1
script=$(cd "$top_builddir" && pwd)/batch/odegen.sh
[ -x "$script" ] || fail "no $script (make builds the batch/ copies)"
# small output; the job (not the reference run) pauses 100 ms per chunk
# (HPC_ODEGEN_TEST_PACE, passed on by sbatch's environment): 94 chunks on 2
# ranks last >= 4.7 s however fast the machine, long enough to interrupt
args="--system lorenz --rtol 1e-9 --atol 1e-12 --t1 50 --nt 11 -n 24000 --chunk 256"

step "reference run"
odegen 2 $args --out "$T/ref.h5" -q || fail "reference run"

step sbatch
job=$(cd "$T" && HPC_ODEGEN_TEST_PACE=100 sbatch --parsable --nodes=1 --ntasks-per-node=2 -t 5 \
      -o "$T/job.out" "$script" --out "$T/run.h5" $args) || fail sbatch
# signal it as Slurm does before the time limit, once it is computing
i=0
until grep -q 'traj (' "$T/job.out" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 120 ] && fail "no progress from job $job in 60 s: $(squeue -h -j "$job" -o '%T %r')"
    sleep 0.5
done
[ -f "$T/run.h5" ] && fail "job finished before it could be interrupted (is the pace hook working?)"
step "USR1 to the batch script"
scancel --signal=USR1 --batch "$job" || fail "scancel --signal"
# Slurm holds a requeued job back (begin time = now + CredExpire, 2
# minutes) so that its last run can end first; once it is pending again
# and that run's batch folder is gone, let it start now
i=0
until scontrol -o show job "$job" | grep -q 'JobState=PENDING.*Restarts=1' && [ ! -e "$SLURM_DIR/spool/job$job" ]; do
    i=$((i + 1)); [ $i -gt 60 ] && fail "job $job was not requeued"; sleep 0.5
done
scontrol update JobId="$job" StartTime=now || fail "cannot release job $job"
step "wait for the second run"
slurm_wait "$job" 300 || fail "job $job: $(scontrol -o show job "$job" | grep -o 'JobState=[A-Z]* .*ExitCode=[0-9:]*')"
step done
grep -q 'requeueing job' "$T/job.out" || fail "the script did not requeue itself"
grep -q '(restart 1)' "$T/job.out" || fail "no second run"
[ -f "$T/run.h5" ] && [ ! -e "$T/run.h5.partial" ] || fail "final file missing or .partial left"
same_data "$T/ref.h5" "$T/run.h5" || fail "requeued run differs from the uninterrupted one"
echo "slurm_odegen.sh: all checks passed"
