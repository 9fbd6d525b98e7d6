#!/bin/sh
# odegen_writer.sh - hpc-odegen's writer: chunks written by a thread while
# the next batch is solved, synced every --sync-every seconds, not per
# chunk; --dtype float32.
#   1. kill -9 between syncs: the .partial has chunks written (their
#      checksums in /stats/written) and none flagged done; --resume checks
#      and keeps every one of them and ends equal to an uninterrupted run;
#   2. a torn chunk (what a crashed node leaves: bytes that are not what
#      was written) fails its checksum and is computed again: equal again;
#   3. --sync-every 0: every written chunk is flagged done at once;
#   4. --dtype float32: /x0 and /y are float32, each value the float64
#      run's rounded once; the status and counts are the float64 run's;
#   5. a bad --sync-every is one line, exit 2.
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
PY=${PYTHON_SCI:-}
[ -n "$PY" ] && "$PY" -c "import h5py, numpy" 2>/dev/null || { echo "SKIP: no Python with h5py and numpy"; exit 77; }
ARGS="-n 3000 --chunk 16 --nt 21 --seed 12"
odegen 2 -q --out "$T/ref.h5" $ARGS || fail "reference run"

# flags FILE: "done written" counts of the .partial's bookkeeping
flags() {
    "$PY" -c "import h5py, sys
f = h5py.File(sys.argv[1], 'r')
print(int((f['stats/done'][()] != 0).sum()), int((f['stats/written'][()] != 0).sum()))" "$1"
}

step "1. kill -9 between syncs, --resume keeps what was written"
# (paced, so that both ranks take chunks in turn and neither finishes -
# and syncs at its end - before rank 1 dies at its 21st)
HPC_ODEGEN_TEST_PACE=20 HPC_ODEGEN_TEST_KILL=1:20 odegen 2 -q --sync-every 1000 --out "$T/a.h5" $ARGS 2>/dev/null && fail "the killed run succeeded"
set -- $(flags "$T/a.h5.partial")
# Under MPICH the launcher kills the other rank too: nothing is flagged.
# Open MPI's sends it SIGTERM, a stop: it syncs and flags its own chunks
# on the way out, so only the killed rank's stay written but unflagged.
[ "$2" -ge 30 ] || fail "only $2 chunks recorded as written before the kill"
[ "$(($2 - $1))" -ge 15 ] || fail "$1 of $2 written chunks flagged done: the killed rank's were synced without a sync"
written=$(($2 - $1))
HPC_LOG=info odegen 2 -q --sync-every 1000 --resume --out "$T/a.h5" $ARGS 2> "$T/a.log" || { cat "$T/a.log"; fail "resume a"; }
grep -q -- "--resume: $written chunks written by the last run checked and kept" "$T/a.log" ||
    { cat "$T/a.log"; fail "resume a did not keep the $written written chunks"; }
same_data "$T/ref.h5" "$T/a.h5" || fail "resumed file a differs from the uninterrupted run"
echo "kill -9 between syncs: $written written chunks kept, file identical"

step "2. a torn chunk is computed again"
HPC_ODEGEN_TEST_PACE=20 HPC_ODEGEN_TEST_KILL=0:40 odegen 2 -q --sync-every 1000 --out "$T/b.h5" $ARGS 2>/dev/null && fail "the killed run succeeded"
torn=$("$PY" -c "import h5py, numpy, sys
f = h5py.File(sys.argv[1], 'r+')
# a chunk written, not flagged (flagged ones were synced: trusted)
c = int(numpy.flatnonzero((f['stats/written'][()] != 0) & (f['stats/done'][()] == 0))[0])
k = int(f.attrs['chunk'])
f['y'][c * k, 3, 0] = 12345.0        # bytes other than the ones written
print(c)" "$T/b.h5.partial") || fail "tearing a chunk"
set -- $(flags "$T/b.h5.partial")
HPC_LOG=info odegen 2 -q --sync-every 1000 --resume --out "$T/b.h5" $ARGS 2> "$T/b.log" || { cat "$T/b.log"; fail "resume b"; }
grep -q -- "--resume: $(($2 - $1 - 1)) chunks written by the last run checked and kept" "$T/b.log" ||
    { cat "$T/b.log"; fail "resume b: expected $(($2 - $1 - 1)) of $(($2 - $1)) unflagged written chunks kept (chunk $torn torn)"; }
same_data "$T/ref.h5" "$T/b.h5" || fail "file b (chunk $torn torn, then resumed) differs"
echo "torn chunk $torn computed again, file identical"

step "3. --sync-every 0 flags each batch at once"
HPC_ODEGEN_TEST_PACE=20 HPC_ODEGEN_TEST_KILL=1:40 odegen 2 -q --sync-every 0 --out "$T/c.h5" $ARGS 2>/dev/null && fail "the killed run succeeded"
set -- $(flags "$T/c.h5.partial")
# (the kill may land between a batch written and its sync: one batch per
# rank, 1 chunk each on the CPU)
[ "$1" -ge $(($2 - 2)) ] && [ "$1" -ge 38 ] || fail "--sync-every 0: $1 flagged of $2 written"

step "4. --dtype float32"
odegen 3 -q --dtype float32 --out "$T/f.h5" $ARGS || fail "float32 run"
"$PY" -c "import h5py, numpy as np, sys
a, b = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
for d in ('x0', 'y'):
    assert b[d].dtype == np.float32, (d, b[d].dtype)
    assert np.array_equal(a[d][()].astype(np.float32), b[d][()], equal_nan=True), d
for d in ('stats/status', 'stats/nsteps', 'stats/nfev', 't'):
    assert np.array_equal(a[d][()], b[d][()]), d
print('float32: every value the float64 run rounded once')" "$T/ref.h5" "$T/f.h5" || fail "--dtype float32"

step "5. bad --sync-every"
odegen 2 --sync-every -1 --out "$T/x.h5" $ARGS 2> "$T/stderr"
one_line_error $? 2 "--sync-every -1" hpc-odegen
echo "odegen_writer: all checks passed"
