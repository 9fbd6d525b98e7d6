#!/bin/sh
# coll_bench.sh - hpc-collbench: every collective with --check at 2 and 3
# ranks, in place, nonblocking, 16-bit and integer types, CSV, plot,
# tuning table (and auto reading it back), --membw, --help, usage errors.
bench=${top_builddir:-.}/apps/collbench/hpc-collbench
tmp=${TMPDIR:-/tmp}/coll_bench.$$
mkdir -p $tmp
trap 'rm -rf $tmp' EXIT
fail=0
small="-b 8 -e 4K -f 8 -w 1 -n 2 --check"

run() {  # run NP ARGS...: must exit 0 and report no wrong results
    np=$1; shift
    if ! $MPIEXEC_WRAP -n $np $bench "$@" >$tmp/out 2>$tmp/err; then
        echo "FAIL: -n $np $*"; cat $tmp/out $tmp/err; fail=1; return
    fi
    if grep -q 'WRONG' $tmp/out || ! grep -q '^# summary' $tmp/out; then
        echo "FAIL: -n $np $*: wrong results or no summary"; cat $tmp/out; fail=1; return
    fi
    echo "ok: -n $np $*"
}

usage_error() {  # usage_error NP WORD ARGS...: exit 2, one line naming WORD
    np=$1; word=$2; shift 2
    $MPIEXEC_WRAP -n $np $bench "$@" >$tmp/out 2>$tmp/err
    st=$?
    lines=$(grep -c . $tmp/err)
    if [ $st -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$word" $tmp/err; then
        echo "FAIL: $*: exit $st (want 2), $lines stderr lines (want 1 naming '$word'):"; cat $tmp/err; fail=1
    else
        echo "ok: $* -> $(cat $tmp/err)"
    fi
}

# every collective (--tune without -c runs them all), results checked
run 2 $small -r 1 --tune=$tmp/tune.txt
# rows keyed by nodes, ranks per node and memory kind (one node of 2 ranks
# here), and the shared memory's constants
grep -q '^allreduce 1 2 host 0 ' $tmp/tune.txt && grep -q '^alltoall 1 2 host [0-9]* - ' $tmp/tune.txt \
    && grep -q '^beta_shm [0-9]' $tmp/tune.txt && grep -q '^alpha_shm [0-9]' $tmp/tune.txt \
    || { echo "FAIL: tuning table"; cat $tmp/tune.txt; fail=1; }
[ "$(grep -c '^# summary' $tmp/out)" -eq 8 ] || { echo "FAIL: not 8 summaries"; cat $tmp/out; fail=1; }
HPC_COLL_TUNING=$tmp/tune.txt run 2 -c allreduce $small -a auto
run 2 -c barrier $small
run 3 -c allreduce $small -o max
run 3 -c reduce_scatter $small -d int64 -o avg
run 3 -c bcast $small -r 2 --inplace
run 2 -c allgather $small --inplace --nonblocking -d bfloat16
run 2 -c allreduce $small -d float16 -o prod -a ring,rabenseifner,native
run 2 -c alltoall $small -d float64 --inplace

# outputs
run 2 -c allreduce $small --csv $tmp/r.csv --membw
grep -q '^coll,alg,dtype' $tmp/r.csv && [ "$(grep -c '^allreduce,ring,float32' $tmp/r.csv)" -eq 4 ] \
    || { echo "FAIL: csv"; cat $tmp/r.csv; fail=1; }
grep -q '^# membw: one core copies' $tmp/out && grep -q "^# membw: the node's 2 ranks copying at once: " $tmp/out ||
    { echo "FAIL: --membw lines"; fail=1; }
# --membw: every algorithm's busbw against memcpy, its time against native's
# (native's own: 1.00), and against the bound of shm's traffic (a column
# of the bound after count, xbnd per algorithm; the summary says the best
# one's fraction); xbnd = busbw / bound in every row, for native too
grep -q 'xmem = busbw / one core' $tmp/out && grep -q ' xmem   xnat   xbnd ' $tmp/out \
    && grep -q '^# bound = the busbw of shm' $tmp/out \
    && awk '/^ +[0-9]/ && ($9 != "1.00" || $3 <= 0) {bad = 1} END {exit bad}' $tmp/out \
    && awk '/^ +[0-9]/ { b = $3; bus = $7; x = $10; if (b > 0 && bus > 0 && (x - bus / b > 0.011 || bus / b - x > 0.011)) bad = 1 }
            END { exit bad }' $tmp/out \
    && grep -q '^# summary: .*x memcpy, [0-9.]* of the bound ([0-9.]* GB/s, shm ' $tmp/out ||
    { echo "FAIL: --membw ratios"; cat $tmp/out; fail=1; }
if [ -n "$GNUPLOT" ]; then
    run 2 -c allreduce $small --plot $tmp/p.png
    head -c 4 $tmp/p.png | grep -q PNG || { echo "FAIL: --plot made no PNG"; fail=1; }
fi

# help and usage errors
$MPIEXEC_WRAP -n 1 $bench --help >$tmp/out 2>&1 && grep -q '^Usage: hpc-collbench' $tmp/out \
    && grep -q -- '--tune FILE' $tmp/out || { echo "FAIL: --help"; cat $tmp/out; fail=1; }
usage_error 2 bogus -c bogus
usage_error 2 bruck -c allreduce -a ring,bruck
usage_error 1 float8 -d float8
usage_error 1 xor -o xor
usage_error 2 -r -r 5
usage_error 1 '-f' -f 1
usage_error 1 frobnicate --frobnicate
usage_error 1 '.png' --plot out.jpg
usage_error 1 '-b' -b 1M -e 1K
usage_error 1 "needs a value" -n
# device memory: runs and checks where there is a GPU, one clear line where not
$MPIEXEC_WRAP -n 2 $bench --mem cuda $small >$tmp/out 2>$tmp/err
st=$?
if [ $st -eq 0 ]; then
    grep -q 'WRONG' $tmp/out && { echo "FAIL: --mem cuda: wrong results"; cat $tmp/out; fail=1; }
    echo "ok: --mem cuda (GPU present)"
elif [ $st -eq 2 ] && grep -q '^hpc-collbench: --mem cuda: rank 0 ([^)]*): no' $tmp/err && [ "$(grep -c . $tmp/err)" -eq 1 ]; then
    echo "ok: --mem cuda -> $(cat $tmp/err)"
else
    echo "FAIL: --mem cuda: exit $st"; cat $tmp/out $tmp/err; fail=1
fi
exit $fail
