#!/bin/sh
# coll_hier.sh - the hierarchical algorithms on fake nodes (issue 13):
# coll_ops (every collective's hier x dtypes x ops x in place x blocking
# and nonblocking, against MPI's own collectives) and coll_mix (hier calls
# overlapping other collectives), with HPC_NODE_SPLIT=odd-even at 4 and 5
# ranks, blocks:2 at 5 and blocks:3 at 7 (nodes of unequal size, and a
# node of one rank); and shm's fallback to hier on more than one node.
tmp=${TMPDIR:-/tmp}/hpc_coll_hier.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$tmp/out"; exit 1; }
run() {   # SPLIT NP PROGRAM [COLL_ONLY]
    HPC_NODE_SPLIT=$1 COLL_ONLY=${4:-all,hier} HPC_TIMEOUT=60 \
        $MPIEXEC_WRAP -n $2 "$top_builddir/tests/$3" >"$tmp/out" 2>&1 || fail "$3 under HPC_NODE_SPLIT=$1 at $2 ranks"
    echo "ok: HPC_NODE_SPLIT=$1 -n $2: $(tail -1 "$tmp/out")"
}
run odd-even 4 coll_ops
run odd-even 5 coll_ops
run blocks:2 5 coll_ops
run blocks:3 7 coll_ops
run odd-even 5 coll_mix
run blocks:3 7 coll_mix
# shm on more than one node is hier
run odd-even 4 coll_ops allreduce,shm
