#!/bin/sh
# coll_misuse.sh - the desync check (HPC_DEBUG=coll), the mismatch check
# (ranks running one call with different algorithms, or calls out of
# step; always on) and the watchdog (HPC_TIMEOUT) turn hangs into one
# clear line and a failed job.
prog=${top_builddir:-.}/tests/coll_misuse
out=${TMPDIR:-/tmp}/coll_misuse.$$
trap 'rm -f $out' EXIT
fail=0

# correct use under the desync check passes
HPC_DEBUG=coll $MPIEXEC_WRAP -n 3 $prog ok >$out 2>&1 || { echo "FAIL: ok under HPC_DEBUG=coll"; cat $out; fail=1; }

# a count mismatch: non-zero exit and one line naming the ranks and calls
HPC_DEBUG=coll HPC_TEST_TIMEOUT=60 $MPIEXEC_WRAP -n 3 $prog desync >$out 2>&1
st=$?
line=$(grep 'collective desync' $out)
if [ $st -eq 0 ] || [ -z "$line" ]; then
    echo "FAIL: desync: exit $st, no desync line"; cat $out; fail=1
else
    echo "desync (exit $st): $line"
    echo "$line" | grep -q 'rank 0,2 called #3 allreduce(count=8' || { echo "FAIL: line lacks ranks 0,2"; fail=1; }
    echo "$line" | grep -q 'rank 1 called #3 allreduce(count=7' || { echo "FAIL: line lacks rank 1"; fail=1; }
    [ "$(grep -c 'collective desync' $out)" -eq 1 ] || { echo "FAIL: more than one desync line"; fail=1; }
fi

# different collectives
HPC_DEBUG=coll HPC_TEST_TIMEOUT=60 $MPIEXEC_WRAP -n 2 $prog desync-op >$out 2>&1
st=$?
line=$(grep 'collective desync' $out)
if [ $st -eq 0 ] || ! echo "$line" | grep -q 'bcast' || ! echo "$line" | grep -q 'allreduce'; then
    echo "FAIL: desync-op: exit $st"; cat $out; fail=1
else
    echo "desync-op (exit $st): $line"
fi

# different algorithms for one call, no HPC_DEBUG: one line naming both,
# well before the wrapper's 60 s kill (HPC_COLL_STALL=0.3: checked 0.3 s
# into a stall)
for np in 2 3; do
    start=$(date +%s)
    HPC_COLL_STALL=0.3 HPC_TEST_TIMEOUT=60 $MPIEXEC_WRAP -n $np $prog algmix >$out 2>&1
    st=$?
    took=$(( $(date +%s) - start ))
    line=$(grep 'different algorithms' $out)
    if [ $st -eq 0 ] || [ -z "$line" ] || [ $took -ge 55 ]; then
        echo "FAIL: algmix -n $np: exit $st after ${took}s"; cat $out; fail=1
    else
        echo "algmix -n $np (exit $st, ${took}s): $line"
        echo "$line" | grep -q "allreduce #3" || { echo "FAIL: line lacks the call"; fail=1; }
        echo "$line" | grep -q "'tree'" && echo "$line" | grep -q "'ring'" \
            || { echo "FAIL: line lacks the two algorithms"; fail=1; }
        [ "$(grep -c 'different algorithms' $out)" -eq 1 ] || { echo "FAIL: more than one line"; fail=1; }
    fi
done

# calls out of step (one rank made a call the others did not), no
# HPC_DEBUG: said so, not blamed on the algorithms
for np in 2 3; do
    HPC_COLL_STALL=0.3 HPC_TEST_TIMEOUT=60 $MPIEXEC_WRAP -n $np $prog outofstep >$out 2>&1
    st=$?
    line=$(grep 'hpc: rank' $out | head -1)
    if [ $st -eq 0 ] || ! echo "$line" | grep -q 'calls out of step' || grep -q 'different algorithms' $out; then
        echo "FAIL: outofstep -n $np: exit $st"; cat $out; fail=1
    else
        echo "outofstep -n $np (exit $st): $line"
        echo "$line" | grep -q "bcast(count=8 float32, root 0)" && echo "$line" | grep -q "allreduce(count=8 float32 sum)" \
            || { echo "FAIL: line lacks the two calls"; fail=1; }
    fi
done

# the same from memory kinds: rank 0 host memory, rank 1 device memory
# (NCCL); needs a GPU per rank, so it says it skipped elsewhere
HPC_COLL_STALL=0.3 HPC_TEST_TIMEOUT=60 $MPIEXEC_WRAP -n 2 $prog kindmix >$out 2>&1
st=$?
if grep -q 'kindmix: skipped' $out; then
    echo "kindmix: $(grep 'kindmix: skipped' $out)"
else
    line=$(grep 'different algorithms' $out)
    if [ $st -eq 0 ] || [ "$(grep -c 'different algorithms' $out)" -ne 1 ] ||
       ! echo "$line" | grep -q "'nccl' (device memory)"; then
        echo "FAIL: kindmix: exit $st"; cat $out; fail=1
    else
        echo "kindmix (exit $st): $line"
    fi
fi

# the watchdog: rank 1 never joins; rank 0 aborts naming it.  The bound on
# the time only tells a watchdog abort (2 s + start-up) from the wrapper's
# 60 s kill, so a loaded or slow machine still passes.
start=$(date +%s)
HPC_TIMEOUT=2 HPC_TEST_TIMEOUT=60 $MPIEXEC_WRAP -n 2 $prog timeout >$out 2>&1
st=$?
took=$(( $(date +%s) - start ))
line=$(grep 'watchdog' $out | head -1)
if [ $st -eq 0 ] || [ -z "$line" ] || [ $took -ge 55 ]; then
    echo "FAIL: timeout: exit $st after ${took}s"; cat $out; fail=1
else
    echo "watchdog (exit $st, ${took}s): $line"
    echo "$line" | grep -q 'allreduce #1' || { echo "FAIL: line lacks the operation and sequence number"; fail=1; }
    echo "$line" | grep -q 'rank(s) 1' || { echo "FAIL: line lacks the rank waited for"; fail=1; }
fi
exit $fail
