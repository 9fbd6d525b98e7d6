#!/bin/sh
# coll_hier.sh - the hierarchical algorithms on fake nodes (issue 13):
# coll_ops (every collective's hier x dtypes x ops x in place x blocking
# and nonblocking, against MPI's own collectives) and coll_mix (hier calls
# overlapping other collectives), with HPC_NODE_SPLIT=odd-even at 4 and 5
# ranks, blocks:2 at 5 and blocks:3 at 7 (nodes of unequal size, and a
# node of one rank); and shm's fallback to hier on more than one node.
# The in-node phases run on each node's shared memory (issue 21), also by
# single copy (HPC_COLL_SINGLE_COPY=0), and over point-to-point where a
# tuning file's rows for one node say so.
tmp=${TMPDIR:-/tmp}/hpc_coll_hier.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$tmp/out"; exit 1; }
run() {   # SPLIT NP PROGRAM [COLL_ONLY [VAR=VALUE...]]
    split=$1 np=$2 prog=$3 only=${4:-all,hier}
    shift 4 2>/dev/null || shift $#
    env HPC_NODE_SPLIT=$split COLL_ONLY=$only HPC_TIMEOUT=60 "$@" \
        $MPIEXEC_WRAP -n $np "$top_builddir/tests/$prog" >"$tmp/out" 2>&1 \
        || fail "$prog under HPC_NODE_SPLIT=$split at $np ranks $*"
    echo "ok: HPC_NODE_SPLIT=$split -n $np $*: $(grep -v UCX "$tmp/out" | tail -1)"
}
run odd-even 4 coll_ops
run odd-even 5 coll_ops
run blocks:2 5 coll_ops
run blocks:3 7 coll_ops
run odd-even 5 coll_mix
run blocks:3 7 coll_mix
# shm on more than one node is hier
run odd-even 4 coll_ops allreduce,shm
# in-node phases by single copy
run odd-even 5 coll_ops all,hier HPC_COLL_SINGLE_COPY=0
# in-node phases over point-to-point, as the rows of one node say
printf '%s\n' 'reduce 1 * host 0 - ring' 'bcast 1 * host 0 - linear' 'gather 1 * host 0 - linear' \
    'scatter 1 * host 0 - tree' 'allreduce 3 1 host 0 - linear' >"$tmp/p2p.tune"
run blocks:3 7 coll_ops all,hier HPC_COLL_TUNING="$tmp/p2p.tune"
