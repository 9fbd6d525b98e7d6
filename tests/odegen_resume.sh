#!/bin/sh
# odegen_resume.sh - kill -9 a rank mid-run, then --resume: the resumed
# file equals an uninterrupted run's, bit for bit (datasets, and every
# root attribute except command_line, created, ranks, wall_time, runs,
# resume_command_line, which describe the runs rather than the data).
#
# Kills: HPC_ODEGEN_TEST_KILL=R:K makes rank R SIGKILL itself when it takes
# its (K+1)-th chunk (deterministic: one chunk handed out, never written);
# the last case kills a rank from outside with kill -9 at whatever moment
# (HPC_ODEGEN_TEST_PACE slows that run down so the kill lands on any machine).
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
ARGS="-n 2000 --chunk 16 --nt 21 --seed 9"

odegen 2 -q --out "$T/ref.h5" $ARGS || fail "reference run"

killed_run() {   # killed_run NP R K FILE: expect the run to die
    if HPC_ODEGEN_TEST_KILL=$2:$3 odegen "$1" -q --out "$4" $ARGS 2>/dev/null; then
        fail "the run with rank $2 killed succeeded"
    fi
    [ ! -e "$4" ] || fail "a killed run left $4 under its final name"
    [ -e "$4.partial" ] || fail "a killed run left no $4.partial"
}

# rank 1 of 3 dies after 10 chunks; resume on 2 ranks
killed_run 3 1 10 "$T/a.h5"
odegen 2 -q --resume --out "$T/a.h5" $ARGS || fail "resume a"
[ -e "$T/a.h5" ] && [ ! -e "$T/a.h5.partial" ] || fail "resume a: not renamed"
same_data "$T/ref.h5" "$T/a.h5" || fail "resumed file a differs from the uninterrupted run"
[ "$(stable_attrs "$T/ref.h5")" = "$(stable_attrs "$T/a.h5")" ] || fail "attributes of a differ"

# rank 0 (the work counter's home) dies; the resume is killed again; a
# second resume on 4 ranks finishes
killed_run 2 0 30 "$T/b.h5"
if HPC_ODEGEN_TEST_KILL=2:5 odegen 3 -q --resume --out "$T/b.h5" $ARGS 2>/dev/null; then
    fail "killed resume succeeded"
fi
odegen 4 -q --resume --out "$T/b.h5" $ARGS || fail "resume b"
same_data "$T/ref.h5" "$T/b.h5" || fail "twice-resumed file b differs from the uninterrupted run"
[ "$(stable_attrs "$T/ref.h5")" = "$(stable_attrs "$T/b.h5")" ] || fail "attributes of b differ"

# --resume of a finished file: nothing to do, success, file untouched
cksum "$T/b.h5" > "$T/sum1"
odegen 2 --resume --out "$T/b.h5" $ARGS > "$T/out" || fail "resume of a complete file"
grep -q "already complete" "$T/out" || fail "resume of a complete file: no message"
cksum "$T/b.h5" | cmp -s - "$T/sum1" || fail "resume of a complete file changed it"

# a rank of the run writing FILE (not the launcher), once FILE.partial
# holds its metadata (its options attribute: a .partial killed before
# hpc_out_ready is not resumable, by design; the file exists earlier, its
# space reserved before HDF5 writes a byte): rank_pid FILE LAUNCHER-PID
rank_pid() {
    for i in $(seq 1 400); do
        victim=$(pgrep -f "hpc-odegen -q --out $1" | while read -r p; do
            [ "$p" != "$2" ] && grep -q hpc-odegen "/proc/$p/comm" 2>/dev/null && echo "$p"; done | tail -1)
        [ -n "$victim" ] && "${H5DUMP:-h5dump}" -a options "$1.partial" > /dev/null 2>&1 && { echo "$victim"; return 0; }
        sleep 0.05
    done
    return 1
}

# kill -9 from outside, at whatever moment the run has reached; the pace
# hook (a 40 ms pause per chunk: 125 chunks on 2 ranks, >= 2.5 s) keeps the
# run going long enough for the kill to land on any machine
BIG="-n 8000 --nt 2 --chunk 64 --seed 4"
odegen 2 -q --out "$T/cbig.h5" $BIG || fail "reference run (big)"
HPC_ODEGEN_TEST_PACE=40 odegen 2 -q --out "$T/c.h5" $BIG 2>/dev/null &
launcher=$!
victim=$(rank_pid "$T/c.h5" $launcher) || fail "no running hpc-odegen rank found to kill"
sleep 0.2
kill -9 "$victim" 2>/dev/null || fail "kill -9 did not land: the run had already ended"
wait $launcher && fail "the run survived kill -9 of a rank"
[ ! -e "$T/c.h5" ] || fail "a killed run left c.h5 under its final name"
[ -e "$T/c.h5.partial" ] || fail "a killed run left no c.h5.partial"
odegen 3 -q --resume --out "$T/c.h5" $BIG || fail "resume c"
same_data "$T/cbig.h5" "$T/c.h5" || fail "file c resumed after kill -9 differs"
echo "odegen_resume: external kill -9 and resume: identical"

# SIGUSR1 (Slurm's warning before the time limit) to one rank only: every
# rank stops taking work, the run exits 75 with one line and a resumable
# .partial, and --resume finishes it to the same data
HPC_ODEGEN_TEST_PACE=40 odegen 2 -q --out "$T/s.h5" $BIG 2>"$T/stop.err" &
launcher=$!
victim=$(rank_pid "$T/s.h5" $launcher) || fail "no running hpc-odegen rank found to signal"
sleep 0.2
kill -USR1 "$victim" || fail "SIGUSR1 did not land: the run had already ended"
wait $launcher
rc=$?
[ $rc = 75 ] || { cat "$T/stop.err"; fail "stopped run: exit $rc, expected 75"; }
[ "$(grep -c . "$T/stop.err")" = 1 ] && grep -q 'stopped by a signal' "$T/stop.err" ||
    { cat "$T/stop.err"; fail "stopped run: not one line"; }
[ ! -e "$T/s.h5" ] && [ -e "$T/s.h5.partial" ] || fail "stopped run: no .partial, or a final file"
odegen 2 -q --resume --out "$T/s.h5" $BIG || fail "resume after the stop"
same_data "$T/cbig.h5" "$T/s.h5" || fail "file s resumed after SIGUSR1 differs"
echo "odegen_resume: SIGUSR1 to one rank: exit 75, one line, resumed identical: $(cat "$T/stop.err")"
echo "odegen_resume: killed and resumed runs equal the uninterrupted ones"
