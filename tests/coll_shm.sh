#!/bin/sh
# coll_shm.sh - the shared-memory algorithms (alg/shm.c, issue 21.1)
# beyond what coll_ops and coll_mix run by default (there: through the
# segment, every rank count of the suite):
#  - single copy (process_vm_readv) forced on every message where the
#    kernel allows it (HPC_COLL_SINGLE_COPY=0), coll_ops at 2, 3 and 7
#    ranks (3 and 7: 64-byte slots, so calls take many chunks and the
#    pipeline wraps) and coll_mix at 5; where the kernel refuses it (a
#    container's seccomp, yama) the segment runs instead, and this says so;
#  - through the segment at 6 ranks (the one count coll_ops skips);
#  - a rank killed (kill -9) inside a shared-memory collective: the job
#    ends within seconds, the others saying which rank died, and none of
#    its processes is left (coll_shm_kill.c; without the check the job
#    would wait a minute, as its launcher is kept from noticing).
. "${top_srcdir:-.}/tests/testlib.sh" coll_shm
b=$(cd "$top_builddir" && pwd)
case $MPIEXEC_WRAP in /*) ;; *) MPIEXEC_WRAP=$(pwd)/$MPIEXEC_WRAP ;; esac
FAIL_SHOW="$T/out"

run() {   # NP PROGRAM [VAR=VALUE...]
    np=$1 prog=$2
    shift 2
    env COLL_ONLY=all,shm HPC_TIMEOUT=60 "$@" $MPIEXEC_WRAP -n "$np" "$b/tests/$prog" >"$T/out" 2>&1 \
        || fail "$prog at $np ranks ($*)"
    echo "ok: $prog -n $np $*: $(grep -v UCX "$T/out" | tail -1)"
}

step "single copy"
cma=$(HPC_COLL_SINGLE_COPY=0 $MPIEXEC_WRAP -n 2 "$b/tests/coll_shm_kill" --probe 2>&1 | tail -1)
echo "single copy between the ranks of this node: $cma"
for np in 2 3 7; do run $np coll_ops HPC_COLL_SINGLE_COPY=0; done
run 5 coll_mix HPC_COLL_SINGLE_COPY=0
step "through the segment"
run 6 coll_ops HPC_COLL_SINGLE_COPY=off

step "a rank killed inside a shared-memory collective"
mkdir "$T/pids"
HPC_TEST_TIMEOUT=90 $MPIEXEC_WRAP -n 3 "$b/tests/coll_shm_kill" "$T/pids" >"$T/out" 2>&1 &
job=$!
i=0
while [ $i -lt 200 ] && [ "$(ls "$T/pids" | wc -l)" -lt 3 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(ls "$T/pids" | wc -l)" -eq 3 ] || { kill $job; fail "the ranks did not start"; }
sleep 0.5
victim=$(cat "$T/pids/pid.1")
start=$(date +%s)
kill -9 "$victim"
wait $job
st=$?
took=$(( $(date +%s) - start ))
[ $st -ne 0 ] || fail "the job ended well after a rank was killed"
[ $took -le 20 ] || fail "the job took ${took}s to end after a rank was killed"
grep -q "rank 1 of this node (pid $victim) has died" "$T/out" || fail "no rank said that rank 1 died"
# (the ranks here are not the launcher's own children: give an aborting
# rank a few seconds to exit)
for f in "$T"/pids/pid.*; do
    pid=$(cat "$f") i=0
    while [ $i -lt 50 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.2; i=$((i + 1)); done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fail "process $pid ($f) is left"; fi
done
echo "ok: killed rank 1 (pid $victim): the job ended in ${took}s (exit $st): $(grep -m1 'has died' "$T/out")"
