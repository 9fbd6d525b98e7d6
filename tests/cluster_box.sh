#!/bin/sh
# cluster_box.sh - every multi-node path on a cluster in a box
# (tests/cluster/cluster.sh: 3 nodes of Linux namespaces on a private
# bridge, Slurm with munge, TCP between nodes, private shared memory per
# node): started once for this build's MPI, the cases of tests/cluster/
# run against it one after the other, then stopped, with nothing left
# behind (checked).  Skips (77) where the cluster cannot run: not root, no
# namespaces, no bridge, no Slurm or munge.  Each case prints its time.
#
# HPC_TEST_CLUSTER_CASES="info coll ..." runs those cases only.
. "$top_srcdir/tests/train_lib.sh"   # testlib.sh, close (losses within a bound)
. "$top_srcdir/tests/cluster/lib.sh"
for f in "$top_srcdir"/tests/cluster/cases_*.sh; do . "$f"; done
CASES=${HPC_TEST_CLUSTER_CASES:-info coll pmpi finalize salloc matmul train mem odegen_train pipeline kill_train kill_odegen kill_matmul cut freeze slurmd}
trap 'box_stop > /dev/null 2>&1; rm -rf "$T"' EXIT
step "start: 3 nodes, $HPC_MPI_FLAVOR (srun --mpi=$BOX_MPI)"
# n3 has less memory than the others: 384 MiB for all its processes
box_start 3 n3=384
t_all=$(date +%s)
for c in $CASES; do
    t0=$(date +%s)
    step "case $c"
    mkdir -p "$T/$c"
    # the case's own fail showed the logs; its line is the cause
    ( cd "$T/$c" && "case_$c" ) || { FAIL_SHOW=; fail "case $c (the cause is the FAIL line above)"; }
    node_healthy || fail "after case $c: the cluster did not recover"
    echo "case $c: $(($(date +%s) - t0)) s"
done
step stop
box_stop || fail "the cluster left something behind"
echo "cluster_box.sh: cases $CASES passed in $(($(date +%s) - t_all)) s"
