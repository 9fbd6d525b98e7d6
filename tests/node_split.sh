#!/bin/sh
# node_split.sh - HPC_NODE_SPLIT as a user sees it (issue 13): hpc-info's
# node column follows the fake nodes (odd-even, blocks:K) at 4 and 5 ranks,
# a bad value is refused up front: one line, exit 2; hpc-collbench --tune
# writes both link classes (intra- and inter-node alpha, beta) and gamma.
info=$top_builddir/apps/info/hpc-info
tmp=${TMPDIR:-/tmp}/hpc_node_split.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp"/out "$tmp"/err 2>/dev/null; exit 1; }
py=${PYTHON_SCI:-python3}

# nodes: the value's expected node of each world rank, checked in the JSON
check() {   # SPLIT NP EXPECTED-NODES EXPECTED-LOCAL-RANKS
    HPC_NODE_SPLIT=$1 $MPIEXEC_WRAP -n $2 "$info" --json >"$tmp/out" 2>"$tmp/err" \
        || fail "HPC_NODE_SPLIT=$1 at $2 ranks"
    $py - "$tmp/out" "$3" "$4" <<'PYEOF' || fail "HPC_NODE_SPLIT=$1 at $2 ranks: node column"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = [r["node"] for r in d["ranks"]]
local = [r["local_rank"] for r in d["ranks"]]
assert nodes == [int(x) for x in sys.argv[2].split(",")], nodes
assert local == [int(x) for x in sys.argv[3].split(",")], local
PYEOF
    echo "ok: HPC_NODE_SPLIT=$1 -n $2: nodes $3"
}
check odd-even 4 0,1,0,1 0,0,1,1
check blocks:2 5 0,0,1,1,2 0,1,0,1,0
check blocks:3 5 0,0,0,1,1 0,1,2,0,1
check none 4 0,0,0,0 0,1,2,3

# the table shows it too
HPC_NODE_SPLIT=odd-even $MPIEXEC_WRAP -n 2 "$info" >"$tmp/out" 2>"$tmp/err" || fail "table"
[ "$(awk '$1 == 1 {print $3}' "$tmp/out")" = 1 ] || fail "table: rank 1 not on node 1"

for v in odd blocks:0 blocks:x; do
    rc=0
    HPC_NODE_SPLIT=$v $MPIEXEC_WRAP -n 2 "$info" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ $rc = 2 ] || fail "HPC_NODE_SPLIT=$v: exit $rc, expected 2"
    [ "$(grep -c . "$tmp/err")" = 1 ] || fail "HPC_NODE_SPLIT=$v: not one line on stderr"
    grep -q "HPC_NODE_SPLIT='$v'" "$tmp/err" || fail "HPC_NODE_SPLIT=$v: the line does not name it"
    echo "ok: HPC_NODE_SPLIT=$v -> $(cat "$tmp/err")"
done

# hpc-collbench --tune measures both link classes across fake nodes, and
# the file it writes is one libhpc reads (hpc-info would refuse a bad one)
bench=$top_builddir/apps/collbench/hpc-collbench
HPC_NODE_SPLIT=odd-even $MPIEXEC_WRAP -n 4 "$bench" -q -c allreduce -b 8 -e 64 -n 2 -w 1 \
    --tune="$tmp/tune" >"$tmp/out" 2>"$tmp/err" || fail "collbench --tune under odd-even"
for k in alpha beta gamma alpha_inter beta_inter; do
    grep -q "^$k [0-9]" "$tmp/tune" || fail "--tune wrote no $k"
done
HPC_COLL_TUNING=$tmp/tune $MPIEXEC_WRAP -n 2 "$info" >"$tmp/out" 2>"$tmp/err" || fail "the tuning file is refused"
echo "ok: --tune writes alpha, beta, gamma, alpha_inter, beta_inter"
