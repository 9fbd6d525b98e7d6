#!/bin/sh
# batch_local.sh - the batch scripts outside Slurm (bash batch/NAME.sh on
# a workstation), through the build tree's copy of batch/common.sh:
#   - ranks that fit the cores are bound one to a core, so hpc-info, run
#     the way the scripts run every program, no longer warns that they
#     share cores; more ranks than cores run unbound (and hpc-info warns);
#   - HPC_PROGRESS gets a default for logs (10 s here, 60 s in a Slurm
#     job) unless the user set it; the programs accept it;
#   - the examples in README.md, docs/ and the scripts' headers pass the
#     programs' own options (--out RUNDIR), never a bare folder, which the
#     scripts hand to the program as an argument it refuses;
#   - train.sh stopped by SIGTERM prints a command that continues the run
#     (once: "run the same command again", which hpc-train refuses since
#     the checkpoint exists), and that command finishes it.
. "$top_srcdir/tests/testlib.sh" batch_local
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # CI runs as root
common=$top_builddir/batch/common.sh
info=$top_builddir/apps/info/hpc-info
[ -f "$common" ] || fail "no $common (make builds the batch copies)"
unset SLURM_JOB_ID HPC_NP HPC_PROGRESS
# in a subshell: common.sh defines what the scripts use
launcher() { bash -c '. "$1"; shift; [ -n "$1" ] && HPC_NP=$1; hpc_launcher' sh "$common" "${1:-}"; }
cores=$(bash -c '. "$1"; hpc_cores' sh "$common")
[ "$cores" -ge 1 ] || fail "hpc_cores: '$cores'"

np=$cores
[ "$np" -gt 4 ] && np=4
l=$(launcher $np)
case $l in *"bind-to core"*) ;; *) fail "$np ranks on $cores cores: not bound ($l)" ;; esac
timeout 120 $l "$info" > "$T/out" 2>&1 || { cat "$T/out"; fail "hpc-info through '$l'"; }
[ "$(grep -c -E '^ +[0-9]+  ' "$T/out")" = "$np" ] || { cat "$T/out"; fail "not $np rows"; }
grep -q 'share cores' "$T/out" && { cat "$T/out"; fail "hpc-info still warns about shared cores under '$l'"; }
echo "ok: $np ranks on $cores cores: '$l', hpc-info has no warning about shared cores"

# one rank more than cores: unbound; hpc-info's warning shows the check
# above could fail (only where that is a small job)
if [ "$cores" -le 3 ]; then
    l=$(launcher $((cores + 1)))
    case $l in *"bind-to core"*) fail "$((cores + 1)) ranks on $cores cores bound to cores ($l)" ;; esac
    timeout 120 $l "$info" > "$T/out" 2>&1 || { cat "$T/out"; fail "hpc-info through '$l'"; }
    grep -q 'share cores' "$T/out" || { cat "$T/out"; fail "unbound ranks: no warning from hpc-info"; }
    echo "ok: $((cores + 1)) ranks on $cores cores: '$l', unbound, and hpc-info warns"
fi

# HPC_PROGRESS: 10 s outside Slurm, 60 s in a job, the user's value kept
p=$(bash -c '. "$1"; echo "$HPC_PROGRESS"' sh "$common")
[ "$p" = 10 ] || fail "HPC_PROGRESS outside Slurm: '$p', expected 10"
p=$(SLURM_JOB_ID=1 bash -c '. "$1"; echo "$HPC_PROGRESS"' sh "$common")
[ "$p" = 60 ] || fail "HPC_PROGRESS in a Slurm job: '$p', expected 60"
p=$(HPC_PROGRESS=0 bash -c '. "$1"; echo "$HPC_PROGRESS"' sh "$common")
[ "$p" = 0 ] || fail "HPC_PROGRESS=0 of the user: '$p'"
HPC_PROGRESS=$(bash -c '. "$1"; echo "$HPC_PROGRESS"' sh "$common") "$info" > /dev/null 2>&1 ||
    fail "the programs refuse the scripts' HPC_PROGRESS"
echo "ok: HPC_PROGRESS 10 outside Slurm, 60 in a job, the user's kept"
# the documented command lines
re='(sbatch|bash)( [^ ]+)* [^ ]*batch/(train|odegen|matmul|collbench|info)\.sh +[^- `)|(]'
if grep -n -E "$re" "$top_srcdir/README.md" "$top_srcdir"/docs/*.md "$top_srcdir"/batch/*.sh; then
    fail "an example passes a script something other than the program's options (--out RUNDIR)"
fi
"$top_builddir/apps/train/hpc-train" --data x.h5 runs/big > "$T/out" 2>&1 &&
    fail "hpc-train took a bare folder"
grep -q "unexpected argument 'runs/big'" "$T/out" || fail "hpc-train: no line for a bare folder"
echo "ok: the documented batch command lines pass options only"

# train.sh outside Slurm, stopped by SIGTERM: its advice must be true
B=$(cd "$top_builddir" && pwd)
"$B/tests/train_mkdata" regress "$T/r.h5" 64 > /dev/null 2>&1 || fail "making r.h5"
( cd "$T" && HPC_NP=2 HPC_TRAIN_TEST_PACE=200 exec bash "$B/batch/train.sh" --data "$T/r.h5" \
      --out "$T/run" --steps 40 --batch 16 --log-every 1 --force > "$T/log" 2>&1 ) &
pid=$!
i=0   # signal once it has trained a step or two
while [ "$(cat "$T/run/metrics.csv" 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $pid 2>/dev/null && { kill -KILL $pid; fail "train.sh did not stop within 60 s of SIGTERM"; }
wait $pid
rc=$?
FAIL_SHOW=$T/log
[ $rc = 75 ] || fail "train.sh after SIGTERM: exit $rc, expected 75"
cont=$(sed -n 's/^== stopped; continue with: //p' "$T/log")
[ -n "$cont" ] || fail "train.sh after SIGTERM: no command to continue"
case $cont in *" --resume"*) ;; *) fail "the advice has no --resume: $cont" ;; esac
case $cont in *--force*) fail "the advice keeps --force, which --resume refuses: $cont" ;; esac
( cd "$T" && HPC_NP=2 bash -c "$cont" > "$T/log" 2>&1 ) || fail "the advised command failed: $cont"
grep -q "resuming .*checkpoint.h5 at step" "$T/log" || fail "the advised command did not resume"
grep -q "hpc-train: 40 steps" "$T/log" || fail "the advised command did not finish the 40 steps"
echo "ok: train.sh stopped outside Slurm advises '$cont', which resumes and finishes"

# bad arguments of the scripts: one line from the script, exit 2, and
# nothing run (once: "unbound variable" from the shell; a typo in the
# last step of a chain found after the earlier steps ran)
script_refuses() {   # script_refuses WHAT PATTERN COMMAND...
    what=$1 pattern=$2
    shift 2
    ( cd "$T" && "$@" ) > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc = 2 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q "$pattern" "$T/err" && ! grep -q unbound "$T/err" ||
        { cat "$T/out" "$T/err"; fail "$what: exit $rc, expected 2 and one line '$pattern'"; }
    echo "ok: $what -> $(cat "$T/err")"
}
script_refuses "pipeline.sh --chain with a typo in its last step" "unknown step 'matmull'" \
    bash "$B/batch/pipeline.sh" --local --run "$T/pipe" --chain odegen,matmull --odegen "--out $T/pipe/ode.h5 -n 8"
[ ! -e "$T/pipe/ode.h5" ] && [ ! -e "$T/pipe/odegen" ] || fail "pipeline.sh ran odegen before refusing the chain"
for opt in --run --chain --odegen --odegen-array --train --matmul --sbatch; do
    script_refuses "pipeline.sh $opt without a value" "pipeline.sh: $opt needs a value" bash "$B/batch/pipeline.sh" $opt
done
script_refuses "odegen.sh as an array task outside a Slurm job" "not a task of a Slurm job array" \
    env SLURM_ARRAY_TASK_COUNT=2 bash "$B/batch/odegen.sh" --out "$T/arr.h5" -n 8
script_refuses "odegen.sh as an array task 0 outside a Slurm job" "not a task of a Slurm job array" \
    env SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=1 \
    bash "$B/batch/odegen.sh" --out "$T/arr.h5" -n 8
[ ! -e "$T/arr-shard0000-of0002.h5" ] || fail "odegen.sh ran a shard outside a job array"

echo "batch_local: the scripts bind local ranks and set the progress interval"
