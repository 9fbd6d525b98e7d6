#!/bin/sh
# coll_sim.sh - hpc-collbench --simulate (issue 13): the predicted table
# for 4096 ranks on 512 nodes and for 64 on 8 (every algorithm with a
# schedule gets numbers, or N/A with the reason where its schedule is too
# big to keep), its CSV and plot, usage errors; and the classic check against a
# published figure: a ring allreduce's bus bandwidth, 2(p-1)/p n / t,
# approaches the link bandwidth 1/beta for large messages (Patarasuk &
# Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
# workstations", JPDC 2009: ring time -> 2(p-1)/p n beta), whatever p.
bench=$top_builddir/apps/collbench/hpc-collbench
tmp=${TMPDIR:-/tmp}/hpc_coll_sim.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$tmp/out"; cat "$tmp/err" 2>/dev/null; exit 1; }
py=${PYTHON_SCI:-python3}

"$bench" --simulate --ranks 64 --nodes 8 -c allreduce -b 1K -e 16M -f 16 --csv "$tmp/sim.csv" \
    >"$tmp/out" 2>"$tmp/err" || fail "--simulate 64/8"
grep -q '^# hpc-collbench --simulate: allreduce float32, 64 ranks on 8 nodes' "$tmp/out" || fail "no header"
rows=$(grep -c -E '^ +[0-9]+ +[0-9]+ ' "$tmp/out")
[ "$rows" = 4 ] || fail "64/8: $rows rows, expected 4 (1K, 16K, 256K, 4M)"
grep -q 'N/A' "$tmp/out" && fail "64/8: an algorithm could not be simulated"
for a in ring rabenseifner hier tree; do
    grep -q ",$a,float32,sum,64,host,simulated," "$tmp/sim.csv" || fail "CSV has no $a rows"
done
echo "ok: 64 ranks on 8 nodes"

# the scale: log-round and hierarchical schedules fit, ring does not
"$bench" --simulate --ranks 4096 --nodes 512 -c allreduce -a rabenseifner,hier,ring -b 1M -e 1M \
    >"$tmp/out" 2>"$tmp/err" || fail "--simulate 4096/512"
grep -E '^ +1048576 ' "$tmp/out" | grep -q -E '^ +1048576 +262144 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ ' \
    || fail "4096/512: no numbers for rabenseifner and hier"
grep -q 'more than .* steps' "$tmp/err" || fail "4096/512: ring's refusal not said"
echo "ok: 4096 ranks on 512 nodes"

# ring busbw -> 1/beta_inter (one rank per node: every link inter-node;
# gamma 0: the published bound counts communication only), within 10%
for p in 4 16 64; do
    HPC_COLL_GAMMA=0 HPC_COLL_BETA_INTER=1e-10 "$bench" --simulate --ranks $p --nodes $p -c allreduce -a ring \
        -b 64M -e 64M >"$tmp/out" 2>"$tmp/err" || fail "ring at $p"
    bus=$(awk '$1 == 67108864 {print $5}' "$tmp/out")
    $py -c "import sys; b = float('$bus'); sys.exit(0 if 0.9 * 10 <= b <= 10.05 else 1)" \
        || fail "ring at $p ranks: busbw $bus GB/s, expected about 10 (1/beta_inter)"
    echo "ok: ring at $p ranks: busbw $bus GB/s (link 10 GB/s)"
done

# the plot of predicted busbw per algorithm, where gnuplot is installed
if [ -n "$GNUPLOT" ] || command -v gnuplot >/dev/null 2>&1; then
    "$bench" --simulate --ranks 64 --nodes 8 -b 1K -e 1M -f 32 --plot "$tmp/sim.png" >"$tmp/out" 2>"$tmp/err" \
        || fail "--simulate --plot"
    [ -s "$tmp/sim.png" ] && grep -q '^# plot (predicted): ' "$tmp/out" || fail "no plot"
    echo "ok: plot"
fi

# usage
rc=0; "$bench" --simulate --ranks 4 --nodes 8 >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q 'more nodes than' "$tmp/err" || fail "--nodes > --ranks: exit $rc"
echo "ok: usage"
