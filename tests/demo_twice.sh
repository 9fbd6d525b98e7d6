#!/bin/sh
# demo_twice.sh - the README's first command, batch/demo.sh, twice in a row
# into the same run folder, as a user who tries it again (issue 28.1: the
# second run once stopped at hpc-train, "checkpoint.h5 exists").  Each run
# must print every step's summary and end with its outputs; the build
# tree's programs are used (HPC_BIN: the demo builds nothing then).
. "$top_srcdir/tests/testlib.sh" demo_twice
FAIL_SHOW=$T/out
export HPC_BIN=$top_builddir
for round in 1 2; do
    step "batch/demo.sh, run $round"
    timeout 600 sh "$top_srcdir/batch/demo.sh" 2 "$T/demo" > "$T/out" 2>&1 || fail "demo run $round failed"
    grep -q '^=== hpc-info on 2 local ranks (hpc-mpiexec -n 2)$' "$T/out" || fail "run $round: no hpc-info step"
    [ "$(grep -c -E '^ +[0-9]+  ' "$T/out")" = 2 ] || fail "run $round: not 2 ranks in hpc-info's table"
    grep -q '^hpc-odegen: 10000 trajectories, 0 failed' "$T/out" || fail "run $round: odegen's summary"
    grep -q '^hpc-train: .* on 2 ranks (cpu[^)]*); train loss' "$T/out" || fail "run $round: train's summary"
    grep -q '^hpc-matmul: .*verify passed' "$T/out" || fail "run $round: matmul's summary"
    grep -q '^=== done in [0-9]* s; outputs:' "$T/out" || fail "run $round: no end"
    for f in ode.h5 train/checkpoint.h5 train/metrics.csv c.h5; do
        grep -q "^  $T/demo/$f " "$T/out" || fail "run $round: $f not listed"
    done
    cp "$T/out" "$T/out.$round"
done
# the second run started afresh: the same losses, not a continued run
l1=$(grep '^hpc-train: ' "$T/out.1" | grep -o 'train loss [0-9.e-]*, val loss [0-9.e-]*')
l2=$(grep '^hpc-train: ' "$T/out.2" | grep -o 'train loss [0-9.e-]*, val loss [0-9.e-]*')
[ -n "$l1" ] && [ "$l1" = "$l2" ] || fail "the runs' losses differ: '$l1' and '$l2'"
echo "demo_twice.sh: all checks passed"
