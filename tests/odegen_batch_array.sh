#!/bin/sh
# odegen_batch_array.sh - batch/odegen.sh's job-array mapping, run as Slurm
# runs each task (its SLURM_ARRAY_* variables as Slurm 22.05 sets them, see
# below) with srun and sbatch on PATH that log their arguments (srun then
# runs the program itself, one rank): --array=0-2 and --array=1-5:2 map
# tasks to --shard 0/3 .. 2/3, which write the three shard files with the
# user's --out, task 0 submits the join job with --join 3 and the real
# --out after the array, and that join (carrying the array's variables)
# joins rather than shards; the joined file equals one run.  A sparse
# --array=1,3,5 (which Slurm reports as COUNT 3, MIN 1, MAX 5, STEP 1,
# the same as 1,2,5) is refused by every task with one line naming
# --array=0-2, exit 2, before anything runs; so are 1,2,5 and a list
# without STEP (older Slurm).  One task (--array=4) is a whole run.
# tests/slurm_batch.sh runs a real array on a real Slurm.
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
SCRIPT=$(cd "$top_builddir" && pwd)/batch/odegen.sh
[ -x "$SCRIPT" ] || { echo "SKIP: no $SCRIPT (built by make)"; exit 77; }
command -v bash > /dev/null || { echo "SKIP: no bash"; exit 77; }
mkdir "$T/bin" "$T/work"
cat > "$T/bin/srun" <<EOF
#!/bin/sh
# srun [OPTIONS] PROGRAM ARGS...: logged, then PROGRAM runs as one rank
echo "\$*" >> "$T/srun.log"
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
exec "\$@"
EOF
cat > "$T/bin/sbatch" <<EOF
#!/bin/sh
echo "\$*" >> "$T/sbatch.log"
echo 4999
EOF
chmod +x "$T/bin/srun" "$T/bin/sbatch"
ARGS="-n 120 --nt 5 --seed 6 -s lorenz"
odegen 1 -q $ARGS --out "$T/one.h5" || fail "one run"

# task ID COUNT MIN MAX [STEP]: run the script as Slurm would for that task
task() {
    id=$1 count=$2 min=$3 max=$4 stp=${5:-}
    shift 5
    : > "$T/srun.log"
    (cd "$T/work" && env PATH="$T/bin:$PATH" SLURM_JOB_ID=$((5000 + id)) SLURM_JOB_NAME=hpc-odegen \
        SLURM_SUBMIT_DIR="$T/work" SLURM_ARRAY_JOB_ID=5000 SLURM_ARRAY_TASK_ID=$id \
        SLURM_ARRAY_TASK_COUNT=$count SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$max \
        ${stp:+SLURM_ARRAY_TASK_STEP=$stp} RUN_DIR="$T/run" HPC_MAX_REQUEUE=0 \
        bash "$SCRIPT" "$@" > "$T/task.out" 2> "$T/stderr")
}

mapped() {   # mapped SPEC COUNT MIN MAX STEP ID...: tasks ID... write shards 0.. of COUNT
    spec=$1 count=$2 min=$3 max=$4 stp=$5
    shift 5
    rm -rf "$T/work/arr" "$T/sbatch.log" && mkdir "$T/work/arr"
    i=0
    for id in "$@"; do
        task "$id" "$count" "$min" "$max" "$stp" --out arr/ode.h5 $ARGS || { cat "$T/stderr"; fail "$spec: task $id"; }
        grep -q -- "--shard $i/$count .*--resume" "$T/srun.log" || { cat "$T/srun.log"; fail "$spec: task $id is not shard $i/$count"; }
        f=$(printf 'arr/ode-shard%04d-of%04d.h5' $i "$count")
        [ -f "$T/work/$f" ] || { ls "$T/work/arr"; fail "$spec: task $id wrote no $f"; }
        i=$((i + 1))
    done
    [ "$(ls "$T/work/arr" | wc -l)" = "$count" ] || { ls "$T/work/arr"; fail "$spec: not $count files"; }
    # one join job, from task 0 only, after the array, with the real --out
    [ "$(wc -l < "$T/sbatch.log")" = 1 ] || { cat "$T/sbatch.log"; fail "$spec: not one join job"; }
    grep -q -- "--dependency=afterok:5000 .*odegen.sh --join $count --out arr/ode.h5$" "$T/sbatch.log" ||
        { cat "$T/sbatch.log"; fail "$spec: the join job's command"; }
    # the join job, as Slurm runs it: the array's variables inherited
    task 0 "$count" "$min" "$max" "$stp" --join "$count" --out arr/ode.h5 || { cat "$T/stderr"; fail "$spec: join"; }
    grep -q -- "--join $count --out arr/ode.h5$" "$T/srun.log" || { cat "$T/srun.log"; fail "$spec: the join ran as a shard"; }
    for d in /x0 /y /stats/status; do
        "$H5DIFF" -q "$T/one.h5" "$T/work/arr/ode.h5" $d $d || fail "$spec: joined $d differs from one run"
    done
    echo "ok: --array=$spec: tasks $* are shards 0..$((count - 1)) of $count, joined equal to one run"
}
# Slurm 22.05 sets STEP=1 for lists and plain ranges, the step of A-B:S
mapped 0-2 3 0 2 1 0 1 2
mapped 1-5:2 3 1 5 2 1 3 5
mapped "0-2 (no STEP: older Slurm)" 3 0 2 "" 0 1 2

refused() {   # refused SPEC COUNT MIN MAX STEP ID...: every task refuses
    spec=$1 count=$2 min=$3 max=$4 stp=$5
    shift 5
    rm -rf "$T/work/arr" "$T/sbatch.log" && mkdir "$T/work/arr"
    for id in "$@"; do
        task "$id" "$count" "$min" "$max" "$stp" --out arr/ode.h5 $ARGS
        rc=$?
        [ $rc = 2 ] || { cat "$T/stderr"; fail "$spec: task $id exit $rc, expected 2"; }
        [ "$(grep -c . "$T/stderr")" = 1 ] && grep -q -- "--array=0-$((count - 1))" "$T/stderr" ||
            { cat "$T/stderr"; fail "$spec: task $id: not one line naming --array=0-$((count - 1))"; }
        [ ! -s "$T/srun.log" ] && [ ! -e "$T/sbatch.log" ] && [ -z "$(ls "$T/work/arr")" ] ||
            fail "$spec: task $id ran something"
    done
    echo "ok: --array=$spec refused: $(cat "$T/stderr")"
}
refused 1,3,5 3 1 5 1 1 3 5
refused "1,3,5 (no STEP)" 3 1 5 "" 1 3 5
refused 1,2,5 3 1 5 1 1 2 5

# one task is no split: the whole run into the real --out
rm -rf "$T/work/arr" && mkdir "$T/work/arr"
task 4 1 4 4 1 --out arr/ode.h5 $ARGS || { cat "$T/stderr"; fail "--array=4"; }
! grep -q -- --shard "$T/srun.log" && same_data "$T/one.h5" "$T/work/arr/ode.h5" || fail "--array=4 is not one whole run"
echo "ok: --array=4: one whole run"
echo "odegen_batch_array: job arrays map to shards or are refused"
