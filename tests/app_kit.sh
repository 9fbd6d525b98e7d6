#!/bin/sh
# app_kit.sh - the app kit through a program made of it alone
# (tests/app_demo): option values of every kind parsed and checked, --help
# from the table, the options key and its difference, one line and exit 2
# for every bad flag, value or HPC_* setting (from one rank, on 3 ranks),
# agree-then-fail naming the failing rank, a failure kept for later
# (hpc_app_fail_later) ending every rank at the next agreement, and a stop
# raised on one rank seen by every rank at the same step.
demo=${top_builddir:-.}/tests/app_demo
T=$(mktemp -d "${TMPDIR:-/tmp}/app_kit.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/out" "$T/err" 2>/dev/null; exit 1; }
run() { $MPIEXEC_WRAP -n "$@" > "$T/out" 2> "$T/err"; }

# values of every kind
run 2 "$demo" -n 7 -x 1e-310 --big inf -s 8K --name w -m c --pair 1,2 -f || fail "good options"
grep -q '^n=7 x=9.9999999999999694e-311 big=inf size=8192 name=w mode=2 flag=1 pair=1,2$' "$T/out" ||
    fail "parsed values"
grep -q '^key=n=7;x=9.9999999999999694e-311;name=w;mode=c$' "$T/out" || fail "options key"
[ ! -s "$T/err" ] || fail "stderr not empty"
run 1 "$demo" --was 'n=7;x=0.5;name=demo;mode=a' || fail "--was"
grep -q '^diff=n: 7 in the file, 5 now$' "$T/out" || fail "key difference"
echo "ok: values, key, key difference"

# --help and --version
run 1 "$demo" --help || fail "--help exit"
grep -q '^Usage: app_demo \[OPTIONS\]$' "$T/out" && grep -q '^Values:$' "$T/out" &&
    grep -q '^  -n, --n N  ' "$T/out" && grep -q '^      --fail-rank R  ' "$T/out" &&
    grep -q '^  -q, --quiet' "$T/out" && grep -q '^Exit status' "$T/out" || fail "--help text"
awk 'length > 79 { bad = 1 } END { exit bad }' "$T/out" || fail "--help has lines over 79 columns"
grep -A1 -- '-f, --flag' "$T/out" | tail -1 | grep -q '^                         [a-z]' || fail "help not wrapped"
run 1 "$demo" --version && grep -q '^app_demo (hpckit [0-9]' "$T/out" || fail "--version"
echo "ok: --help, --version"

# bad input: exit 2, exactly one line, from one rank, naming the problem
bad() {   # bad PATTERN ARGS...
    pattern=$1
    shift
    run 3 "$demo" "$@"
    rc=$?
    [ $rc = 2 ] || fail "$*: exit $rc, expected 2"
    [ "$(grep -c . "$T/err")" = 1 ] || fail "$*: not one line on stderr"
    grep -q "^app_demo: .*$pattern" "$T/err" || fail "$*: line lacks '$pattern'"
    echo "ok: ${*:-$pattern} -> $(cat "$T/err")"
}
bad "-n 0: must be in \[1, 100\]" -n 0
bad "'abc' is not an integer" -n abc
bad "needs a value" -n
bad "must be > 0" -x 0
bad "not a finite number" -x inf
bad "not a size" -s 3Q
bad "empty value" --name ''
bad "not one of a|b|c" -m d
bad "expected MU,SIGMA" --pair 1
bad "unknown option '--bogus' (see --help)" --bogus
bad "unknown option '--nmae': did you mean --name? (see --help)" --nmae x
bad "unknown option '--fail-rnk': did you mean --fail-rank?" --fail-rnk=1
bad "unknown option '-Z'" -fZ
bad "unexpected argument 'extra'" extra
bad 'bad\\nname' --pair 'bad
name'
HPC_LOG=verbose bad "HPC_LOG='verbose'"
HPC_PROGRESS=yes bad "HPC_PROGRESS='yes': expected seconds"
HPC_PROGRESS=-1 bad "HPC_PROGRESS='-1': expected seconds"
HPC_PROGRESS=30s bad "HPC_PROGRESS='30s': expected seconds"
HPC_PROGRESS=nan bad "HPC_PROGRESS='nan'"
HPC_TIMEOUT=-1 bad "HPC_TIMEOUT"
HPC_DEBUG=everything bad "HPC_DEBUG"
HPC_COLL_ALLREDUCE=rign bad "allreduce has no algorithm"
# a name that is not a setting is a warning, HPC_COLL_* as any other
HPC_COLL_ALLREDCE=ring run 2 "$demo" -q || fail "HPC_COLL_ALLREDCE=ring: exit $?, expected 0 (a warning)"
[ "$(grep -c . "$T/err")" = 1 ] && grep -q "HPC_COLL_ALLREDCE is not a setting of hpckit: did you mean HPC_COLL_ALLREDUCE?" "$T/err" ||
    fail "HPC_COLL_ALLREDCE=ring: not one warning naming HPC_COLL_ALLREDUCE"
HPC_COLL_STALL=soon bad "HPC_COLL_STALL='soon': expected seconds"
HPC_COLL_STALL=0.5 HPC_COLL_POOL_MAX=64M HPC_COLL_POOL_IDLE=2 run 2 "$demo" -q || fail "valid HPC_COLL_* settings refused"
HPC_GPU_BIND=sideways bad "HPC_GPU_BIND='sideways'"

# agree, then fail once: the failing rank's line and status
run 3 "$demo" --fail-rank 2
rc=$?
[ $rc = 1 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q '^app_demo: rank 2 says no$' "$T/err" ||
    fail "--fail-rank 2: exit $rc"
echo "ok: agree-then-fail -> $(cat "$T/err")"

# a failure kept for later on one rank (hpc_app_fail_later): every rank
# ends at the next stop agreement, or at hpc_app_finish, one line, exit 1
run 3 "$demo" --later-rank 1 --steps 100
rc=$?
[ $rc = 1 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q '^app_demo: rank 1 failed at step 3$' "$T/err" ||
    fail "--later-rank 1 --steps 100: exit $rc"
grep -q "stopped after step" "$T/out" && fail "--later-rank: the ranks went on past the agreement"
run 3 "$demo" --later-rank 2
rc=$?
[ $rc = 1 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q '^app_demo: rank 2 failed, said at the end$' "$T/err" ||
    fail "--later-rank 2: exit $rc"
echo "ok: a failure kept for later ends every rank at the next agreement -> $(cat "$T/err")"

# a stop raised on rank 1 only: all ranks stop after the same step, 75
run 3 "$demo" --stop-rank 1 --steps 100
rc=$?
[ $rc = 75 ] || fail "--stop-rank 1: exit $rc, expected 75"
grep -q 'stopped after step 3 on every rank (min 3 max 3)' "$T/out" || fail "ranks stopped at different steps"
run 3 "$demo" --steps 100 -q || fail "100 steps without a stop"
[ ! -s "$T/out" ] || fail "--quiet printed"
echo "ok: stop on one rank seen by all at step 3"
run 3 "$demo" --stop-rank 1 --steps 100 --vote
rc=$?
[ $rc = 75 ] || fail "--vote: exit $rc, expected 75"
grep -q 'stopped after step 4 on every rank (min 4 max 4)' "$T/out" || fail "--vote: ranks stopped elsewhere than step 4"
grep -q '^app_demo: stopped by a signal after step 4 of 100' "$T/err" || fail "--vote: the stop line"
echo "ok: the nonblocking vote stops every rank one step later, at step 4"

# progress in a log: a line every HPC_PROGRESS seconds with the fields,
# none with HPC_PROGRESS=0 or --quiet; the old HPC_PROGRESS=1 is 1 s
HPC_PROGRESS=0.2 run 2 "$demo" --steps 20 --pace 50 || fail "progress run"
lines=$(grep -c '^app_demo: [0-9]*/20 steps ([0-9.]*%), item [0-9]*0, [0-9.]* items/s, [0-9.]*s elapsed, ETA ' "$T/err")
[ "$lines" -ge 2 ] && [ "$lines" = "$(grep -c . "$T/err")" ] || fail "HPC_PROGRESS=0.2: $lines progress lines"
awk -F'[ /]' '/^app_demo: / { if ($2 * 10 != $7 + 0) bad = 1 } END { exit bad }' "$T/err" ||
    fail "the program's own field does not follow the count"
HPC_PROGRESS=0 run 2 "$demo" --steps 20 --pace 50 || fail "HPC_PROGRESS=0"
[ ! -s "$T/err" ] || fail "HPC_PROGRESS=0: a progress line"
HPC_PROGRESS=0.2 run 2 "$demo" --steps 20 --pace 50 -q || fail "--quiet"
[ ! -s "$T/err" ] || fail "--quiet: a progress line"
HPC_PROGRESS=1 run 1 "$demo" --steps 50 --pace 50 || fail "HPC_PROGRESS=1"
# a line a second, never closer (the elapsed times 1 s apart or more)
awk -F', ' '/steps \(/ { for (i = 1; i <= NF; i++) if ($i ~ / elapsed$/) t = $i + 0
                         if (n++ && t - last < 0.95) bad = 1; last = t }
     END { exit bad || n < 1 }' "$T/err" || { cat "$T/err"; fail "HPC_PROGRESS=1: not one line a second"; }
echo "ok: progress lines every HPC_PROGRESS seconds in a log, with the program's fields; none when off"

# Ctrl-C (a singleton, its pid is the program's; env restores SIGINT,
# which a shell's background job ignores).  The first signal goes once the
# program shows it runs: a progress line (its loop has asked for the stop
# flag), or "setting up" for --setup.
ctrl_c() {   # ctrl_c PAUSE... -- ARGS: a SIGINT after each pause (seconds); sets rc
    pauses=
    while [ "$1" != -- ]; do pauses="$pauses $1"; shift; done
    shift
    rm -f "$T/out" "$T/err"
    HPC_PROGRESS=0.1 env --default-signal=INT "$demo" "$@" > "$T/out" 2> "$T/err" &
    pid=$!
    i=0
    until grep -q -e '^app_demo: [0-9]*/' "$T/err" 2>/dev/null || grep -q '^setting up' "$T/out" 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 600 ] && { kill -9 $pid; fail "app_demo did not start in 60 s"; }
        sleep 0.1
    done
    for pause in $pauses; do
        [ "$pause" = 0 ] || sleep "$pause"
        kill -INT $pid 2>/dev/null
    done
    wait $pid
    rc=$?
}
ctrl_c 0 -- --steps 100 --pace 100
[ $rc = 75 ] || fail "Ctrl-C: exit $rc, expected 75"
grep -q '^app_demo: interrupted after step [0-9]* of 100: continue with --resume$' "$T/err" || fail "Ctrl-C: the line"
echo "ok: Ctrl-C stops at a step: $(tail -1 "$T/err")"
ctrl_c 0 0 -- --steps 100 --pace 400
[ $rc = 75 ] || fail "one Ctrl-C delivered twice at once (terminal and launcher): exit $rc, expected 75"
ctrl_c 0 1 -- --steps 10 --pace 20000
[ $rc = 130 ] || fail "a second Ctrl-C during a 20 s step: exit $rc, expected 130 (SIGINT)"
grep -q 'interrupted again: aborting' "$T/err" || fail "a second Ctrl-C: no line"
ctrl_c 0 -- --steps 10 --setup 20000
[ $rc = 130 ] || fail "Ctrl-C before the program asks for the flag: exit $rc, expected 130 (SIGINT)"
echo "ok: a second Ctrl-C aborts; one before the first step ends the program at once"
echo "app_kit: all checks passed"
