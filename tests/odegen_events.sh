#!/bin/sh
# odegen_events.sh - events and --t-eval, against scipy's solve_ivp(events=,
# t_eval=) (tests/odegen_ref.py compares counts, times, states and
# values; its twins of the test systems in tests/odegen_systems/):
#  - a ball thrown up (ball.c): the apex recorded, the ground ends the
#    trajectory (status 1, the grid after it NaN), with RK45, RK23, DOP853;
#  - predator and prey crossing thresholds (lv-threshold.c), events that
#    recur, more of them than --max-events keeps;
#  - non-uniform output times (--t-eval), with each method;
#  - events on 1 and 3 ranks, after a kill and --resume, and as two shards
#    joined: the same bits; bad --t-eval files: one line, exit 2.
# Against --seq (scipy with sums in tableau order) everything is equal to
# the bit; against stock scipy within 1e-10 (1e-7 for predator and prey
# at rtol 1e-3, a neutrally stable orbit: see odegen_scipy.sh).
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
SYS=$top_srcdir/tests/odegen_systems
REF="$PYTHON_SCI -W ignore $top_srcdir/tests/odegen_ref.py"
set -e

check() {   # check NAME STOCK_BOUND SEQ_BOUND ODEGEN-ARGS...
    name=$1 stock=$2 seq=$3
    shift 3
    odegen 2 -q --out "$T/$name.h5" "$@" || fail "$name"
    [ -n "$PYTHON_SCI" ] || return 0
    $REF "$T/$name.h5" --rtol-values "$stock" || fail "$name: differs from scipy"
    $REF "$T/$name.h5" --seq --rtol-values "$seq" || fail "$name: differs from sequential-sum scipy"
}

step "events against scipy"
for m in RK45 RK23 DOP853; do
    check "ball-$m" 1e-10 0 --system-file "$SYS/ball.c" -m $m -n 30 --t1 3 --nt 31
done
check lv 1e-7 0 --system-file "$SYS/lv-threshold.c" -n 12 --t1 25 --rtol 1e-6 --atol 1e-9 --x0-low 0.5 --x0-high 3 --max-events 3
check lv-dop853 1e-7 0 --system-file "$SYS/lv-threshold.c" -m DOP853 -n 10 --x0-low 0.5 --x0-high 3 --rtol 1e-6
"$H5DUMP" -d /stats/status "$T/ball-RK45.h5" | grep -q "(0): 1, 1, 1" || fail "the ground does not end the trajectories (status 1)"
if [ -n "$PYTHON_SCI" ]; then
    "$PYTHON_SCI" - "$T/lv.h5" <<'PY' || fail "recurring events"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
c = f["events/prey_low/count"][...]
assert c.max() > 3, "no trajectory crosses more often than --max-events keeps: %s" % c
t = f["events/prey_low/t"][...]
assert np.all(np.isnan(t[c == 0])) and not np.any(np.isnan(t[c >= 3])), "kept times and NaN do not match the counts"
assert int(f["events/predators_high/count"].attrs["direction"]) == 1
PY
fi

step "--t-eval against scipy"
printf '0\n0.0137, 0.5\n# the middle\n1.7 3.14159\n7.25\n9.999\n' > "$T/times.txt"
check te-lorenz 1e-10 0 -s lorenz -n 20 --t-eval "$T/times.txt"
check te-classic 1e-10 1e-11 -n 20 -m DOP853 --t-eval "$T/times.txt"
printf '2.5 3\n' > "$T/late.txt"
check te-late 1e-10 0 -s vanderpol -n 10 -m RK23 --t-eval "$T/late.txt"
check te-ball 1e-10 0 --system-file "$SYS/ball.c" -n 10 --t1 3 --t-eval "$T/late.txt"
# the options recorded in the file name the times (before issue 35 the
# attribute was always empty: the copy of the options dropped --t-eval)
"$H5DUMP" -a /t_eval "$T/te-lorenz.h5" | grep -q '"'"$T"'/times.txt"' || fail "the file's t_eval attribute does not name --t-eval's file"

step "events: ranks, resume, shards"
ARGS="--system-file $SYS/lv-threshold.c -n 300 --chunk 20 --x0-low 0.5 --x0-high 3 --max-events 4"
odegen 1 -q $ARGS --out "$T/r1.h5" || fail "1 rank"
odegen 3 -q $ARGS --out "$T/r3.h5" || fail "3 ranks"
EV="/events/prey_low/count /events/prey_low/t /events/prey_low/y /events/predators_high/t"
for d in $EV; do "$H5DIFF" -q "$T/r1.h5" "$T/r3.h5" $d $d || fail "$d: 1 and 3 ranks differ"; done
same_data "$T/r1.h5" "$T/r3.h5" || fail "1 and 3 ranks differ"
HPC_ODEGEN_TEST_KILL=0:4 odegen 2 -q $ARGS --out "$T/rk.h5" 2> /dev/null && fail "the killed run succeeded"
odegen 2 -q $ARGS --out "$T/rk.h5" --resume || fail "--resume"
for d in $EV; do "$H5DIFF" -q "$T/r1.h5" "$T/rk.h5" $d $d || fail "$d: resumed differs"; done
mkdir "$T/sh"
odegen 1 -q $ARGS --shard 0/2 --out "$T/sh/e.h5" && odegen 2 -q $ARGS --shard 1/2 --out "$T/sh/e.h5" ||
    fail "shards"
odegen 1 -q --join 2 --out "$T/sh/e.h5" || fail "join"
for d in $EV; do "$H5DIFF" -q "$T/r1.h5" "$T/sh/e.h5" $d $d || fail "$d: joined differs"; done

step "bad --t-eval: one line, exit 2"
printf '1 0.5\n' > "$T/down.txt"
printf '0 11\n' > "$T/out.txt"
printf '0 one\n' > "$T/word.txt"
for case in "down.txt:must ascend" "out.txt:outside" "word.txt:not a finite number" "absent.txt:cannot read"; do
    rc=0
    odegen 2 -n 10 --t-eval "$T/${case%%:*}" --out "$T/bad.h5" > /dev/null 2> "$T/stderr" || rc=$?
    one_line_error $rc 2 "--t-eval ${case%%:*}" hpc-odegen
    grep -q "${case#*:}" "$T/stderr" || fail "--t-eval ${case%%:*}: $(cat "$T/stderr")"
done
rc=0
odegen 1 -n 10 --nt 5 --t-eval "$T/times.txt" --out "$T/bad.h5" > /dev/null 2> "$T/stderr" || rc=$?
one_line_error $rc 2 "--nt with --t-eval" hpc-odegen
[ ! -e "$T/bad.h5" ] || fail "a bad --t-eval left an output file"
echo "odegen_events: events and output times as scipy's"
