# cases_batch.sh - the batch scripts across nodes (tests/cluster_box.sh):
# odegen.sh as a job array whose tasks land on different nodes, its join,
# sbatch -N2 train.sh on the joined file; pipeline.sh over 2 nodes.
BATCH=$top_builddir/batch

# the number of nodes a run folder's placement.txt (hpc-info's table)
# names.  Which nodes: Slurm's choice (a node still running the job
# epilog of the job before is passed over), so a test asks how many.
placed_nodes() { rank_hosts "$1" | sort -u | wc -l; }

# wait for JOB (at most SECS) and fail with its state if it did not complete
bjob_ok() { slurm_wait "$1" "$2" || fail "job $1 ($3): $(bstate "$1")"; }

case_odegen_train() {
    ode="-s lorenz -n 300 --nt 11 --seed 5"
    # 3 tasks of 2 ranks each; a node has 2 CPUs: each task fills a node
    sbatch --parsable -N1 --ntasks-per-node=2 --array=0-2 -o "arr-%a.out" "$BATCH/odegen.sh" \
        --out "$PWD/ode.h5" $ode > array.id || fail "sbatch --array"
    i=0
    until join=$(sed -n 's/^== join job \([0-9]*\) .*/\1/p' arr-0.out 2>/dev/null) && [ -n "$join" ]; do
        i=$((i + 1)); [ $i -gt 600 ] && fail "task 0 submitted no join job"; sleep 0.2
    done
    bjob_ok "$join" 180 join
    nodes=$(for a in 0 1 2; do sed -n 's/^ *[0-9][0-9]*  \(n[0-9]\) .*/\1/p' "arr-$a.out" | sort -u; done | sort -u | tr '\n' ' ')
    echo "the array's tasks ran on: $nodes"
    [ "$(echo "$nodes" | wc -w)" -ge 2 ] || fail "the array's tasks all ran on one node ($nodes)"
    [ -f ode.h5 ] || fail "no joined ode.h5"
    # the reference: one un-sharded run on one node
    brun 120 -N1 -n2 "$(bprog odegen)" -q $ode --out one.h5 || fail "the un-sharded run"
    TRAIN="--layers 4,16,16,3 --batch 64 --steps 60 --eval-every 20 --seed 3"
    job=$(sbatch --parsable -N2 --ntasks-per-node=1 --cpus-per-task=1 -o train.out "$BATCH/train.sh" --data "$PWD/ode.h5" --out "$PWD/t2" $TRAIN) ||
        fail "sbatch -N2 train.sh"
    bjob_ok "$job" 180 "train.sh -N2"
    [ "$(placed_nodes t2/placement.txt)" = 2 ] || { cat t2/placement.txt; fail "train.sh -N2 did not run on 2 nodes"; }
    brun 120 -N1 -n2 "$(bprog train)" -q --data "$PWD/one.h5" --out "$PWD/t1" $TRAIN || fail "training on one node"
    close t1 t2 "sbatch -N2 train.sh on the joined file against one node on the un-sharded file" 1e-5
    "$H5DIFF" -q -p 1e-4 t1/checkpoint.h5 t2/checkpoint.h5 /model /model ||
        fail "the checkpoint of 2 nodes differs from one node's beyond 1e-4 relative"
    echo "ok: the joined job array trained on 2 nodes = the un-sharded file on one (1e-4)"
}

case_pipeline() {
    ode="-s lorenz -n 200 --nt 11 --seed 5"
    TRAIN="--layers 4,16,3 --batch 64 --steps 30 --seed 3"
    "$BATCH/pipeline.sh" --run p --chain odegen,train,matmul --sbatch "-N2 --ntasks-per-node=1 --cpus-per-task=1" --odegen-array 2 \
        --odegen "--out $PWD/p/ode.h5 $ode" --train "--data $PWD/p/ode.h5 --out $PWD/p/train $TRAIN" \
        --matmul "--gen 64,64,64 --verify --out $PWD/p/c.h5:/C" > pipe.log 2>&1 || { cat pipe.log; fail "pipeline.sh"; }
    cat pipe.log
    last=$(sed -n 's/^== matmul: job \([0-9]*\).*/\1/p' pipe.log)
    [ -n "$last" ] || fail "pipeline.sh printed no matmul job"
    bjob_ok "$last" 300 "the pipeline's last step"
    for j in $(sed -n 's/^== [a-z-]*: job \([0-9]*\).*/\1/p' pipe.log); do
        scontrol -o show job "$j" 2>/dev/null | grep -q 'JobState=COMPLETED' || fail "pipeline job $j: $(bstate "$j")"
    done
    [ -f p/train/checkpoint.h5 ] && [ -f p/c.h5 ] || fail "the pipeline left no checkpoint or product"
    [ "$(placed_nodes p/train/placement.txt)" = 2 ] || { cat p/train/placement.txt; fail "train did not span 2 nodes"; }
}
