#!/bin/sh
# odegen_status.sh - every per-trajectory status code is reachable through
# the program, the run goes on after failures, the summary counts them,
# and the rows after a failure are NaN.
#   0 ok; -1 step size underflow (finite-time blow-up of x' ~ -x^2 from
#   x0 < -5); -2 non-finite (f(x0) = -(1e200)^2 = -inf); -3 --max-steps.
. "$top_srcdir/tests/odegen_lib.sh"
[ -n "$H5DUMP" ] || { echo "SKIP: no h5dump"; exit 77; }

status_of() {   # status_of FILE: the /stats/status values, one per line
    "$H5DUMP" -d /stats/status -y -w 0 -A 0 "$1" | sed -n '/DATA {/,/}/p' | sed 1d |
        tr -c -- '-0-9' '\n' | grep -E '^-?[0-9]+$'
}

run() {   # run NAME EXPECTED-STATUS ARGS...
    name=$1 want=$2
    shift 2
    odegen 2 --out "$T/$name.h5" "$@" > "$T/$name.out" || fail "$name: run failed"
    got=$(status_of "$T/$name.h5" | sort -u | tr '\n' ' ')
    [ "$got" = "$want " ] || fail "$name: status [$got], expected [$want]"
    echo "ok: $name -> $(cat "$T/$name.out")"
}

run ok 0 -n 16 -d 3
run underflow -1 -n 16 -d 2 --x0-low -7 --x0-high -5.5 --t1 2
run nonfinite -2 -n 16 -d 2 --x0-low -1e200 --x0-high -1e199
run maxsteps -3 -n 16 --max-steps 5
grep -q "16 failed (16 underflow" "$T/underflow.out" || fail "summary does not count underflows"
grep -q "16 failed (0 underflow, 16 non-finite" "$T/nonfinite.out" || fail "summary: non-finite"
grep -q "16 failed (0 underflow, 0 non-finite, 16 max-steps" "$T/maxsteps.out" || fail "summary: max-steps"
# the last row of a failed trajectory is NaN
"$H5DUMP" -d /y -s 0,100,0 -c 1,1,1 "$T/maxsteps.h5" | grep -q nan || fail "rows after a failure are not NaN"
# a mixed run goes on past failures: x0 in [-6, 1) has both kinds
odegen 1 --out "$T/mixed.h5" -n 64 -d 1 --x0-low -6 --x0-high 1 --t1 1 > "$T/mixed.out" || fail "mixed"
got=$(status_of "$T/mixed.h5" | sort -u | tr '\n' ' ')
[ "$got" = "-1 0 " ] || fail "mixed: status [$got], expected both -1 and 0"
echo "ok: mixed -> $(cat "$T/mixed.out")"
echo "odegen_status: every status reachable"
