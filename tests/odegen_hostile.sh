#!/bin/sh
# odegen_hostile.sh - the cases a hostile-input probe of hpc-odegen found
# (each once a hang, wrong data, a crash or a misleading line), replayed:
# every one must now end with one clear line and the right status, or
# succeed where the input was valid, and never leave wrong data behind.
. "$top_srcdir/tests/odegen_lib.sh"

one_line() {   # one_line CODE WHAT NP ARGS...: fails with CODE and one stderr line
    code=$1 what=$2 np=$3
    shift 3
    HPC_TEST_TIMEOUT=120 odegen "$np" "$@" > "$T/stdout" 2> "$T/stderr"
    rc=$?
    [ "$rc" = "$code" ] || { cat "$T/stderr" >&2; fail "$what: exit $rc, expected $code"; }
    [ "$(grep -c . "$T/stderr")" = 1 ] || { cat "$T/stderr" >&2; fail "$what: not one line on stderr"; }
    grep -q '^hpc-odegen: ' "$T/stderr" || fail "$what: the line does not name the program"
    echo "ok: $what -> $(cat "$T/stderr")"
}

# sizes that cannot fit: refused before anything is written (once: a run
# that grew its .partial until the disk was full, or failed inside HDF5)
one_line 1 "N = 2^63-1" 2 -n 9223372036854775807 --out "$T/huge.h5"
grep -q 'would need' "$T/stderr" || fail "N = 2^63-1: not the free-space line"
[ ! -e "$T/huge.h5.partial" ] && [ ! -e "$T/huge.h5" ] || fail "N = 2^63-1: left a file"
one_line 1 "N = 10^12" 1 -n 1000000000000 --out "$T/huge.h5"
one_line 2 "-n 1e12 (not an integer)" 1 -n 1e12 --out "$T/huge.h5"

# a full file system: one line, no hang (once: rank 0 on its error path
# while rank 1 waited inside a collective HDF5 call)
if mkdir -p "$T/full" && mount -t tmpfs -o size=1m tmpfs "$T/full" 2>/dev/null; then
    one_line 1 "full file system, 2 ranks" 2 -n 10000 --out "$T/full/x.h5"
    [ ! -e "$T/full/x.h5" ] || fail "full file system: final name exists"
    umount "$T/full"
else
    echo "note: cannot mount a small tmpfs here (not root?): full file system case skipped"
fi

# two runs writing one output with different seeds: the second is refused
# while the first runs, and the final file holds the first run's data
# (once: both exited 0 and the file held the other's data)
HPC_ODEGEN_TEST_PACE=200 odegen 2 -q -n 640 --chunk 32 --seed 1 --out "$T/twice.h5" &
first=$!
i=0
until [ -e "$T/twice.h5.lock" ] && [ -e "$T/twice.h5.partial" ]; do
    i=$((i + 1)); [ $i -gt 600 ] && fail "first run never started"; sleep 0.05
done
one_line 1 "a second run on the same output" 2 -q -n 640 --chunk 32 --seed 2 --force --out "$T/twice.h5"
grep -q 'another run' "$T/stderr" || fail "second run: not the lock line"
wait $first || fail "the first run failed"
"$H5DUMP" -a /seed "$T/twice.h5" | grep -q '(0): 1$' || fail "the output does not hold the first run's data"
odegen 1 -q -n 640 --chunk 32 --seed 1 --out "$T/twice_ref.h5" || fail "reference"
need_h5diff
same_data "$T/twice_ref.h5" "$T/twice.h5" || fail "twice.h5 differs from a run with seed 1"

# --resume checks types, not only shapes (once: an int32 /y was resumed
# into a final file of wrong data)
if [ -n "$PYTHON_SCI" ]; then
    HPC_ODEGEN_TEST_KILL=0:3 odegen 1 -q -n 200 --chunk 20 --out "$T/typed.h5" 2>/dev/null
    [ -e "$T/typed.h5.partial" ] || fail "no .partial to damage"
    "$PYTHON_SCI" - "$T/typed.h5.partial" <<'EOF' || fail "could not rewrite /y"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    shape = f["y"].shape
    del f["y"]
    f.create_dataset("y", shape=shape, dtype=np.int32)
EOF
    one_line 1 "--resume with an int32 /y" 1 -q -n 200 --chunk 20 --resume --out "$T/typed.h5"
    grep -q 'integer' "$T/stderr" || fail "the line does not name the type"
    [ ! -e "$T/typed.h5" ] || fail "a final file was made from the wrong type"
fi

# an option value of any length is taken whole (once: truncated at 127
# characters, so sigma 5e-131 became 0)
zeros=$(printf '%0130d' 0)
odegen 1 -q -n 4 --x0-normal "0,0.${zeros}5" --out "$T/long.h5" || fail "long --x0-normal refused"
"$H5DUMP" -a /x0_std "$T/long.h5" | grep -q '5e-131' || fail "sigma 5e-131 was not stored as given"
echo "ok: a 133-character option value kept whole"

# a character device is never replaced by a regular file
if mknod "$T/chardev" c 1 3 2>/dev/null; then
    one_line 1 "--force --out a character device" 1 -n 4 --force --out "$T/chardev"
    [ -c "$T/chardev" ] || fail "the character device was replaced"
fi

# documented values are accepted: --max-step inf (the default), a
# subnormal --atol; --chunk larger than N is clamped to N
odegen 1 -q -n 8 --max-step inf --out "$T/inf.h5" || fail "--max-step inf refused"
odegen 1 -q -n 8 --atol 1e-310 --out "$T/sub.h5" || fail "--atol 1e-310 refused"
odegen 1 -q -n 10 --chunk 100 --out "$T/clamp.h5" || fail "--chunk > N failed"
"$H5DUMP" -a /chunk "$T/clamp.h5" | grep -q '(0): 10$' || fail "--chunk 100 with N 10 not clamped to 10"
echo "ok: --max-step inf, --atol 1e-310, --chunk > N"

# a chunk whose buffers would not fit: one line, not an out-of-memory abort
one_line 2 "--chunk 16777216" 1 --chunk 16777216 --out "$T/big.h5"
# the bad letter inside a cluster of short options is the one named
one_line 2 "-n 10 -Zq" 1 -n 10 -Zq --out "$T/z.h5"
grep -q "unknown option '-Z'" "$T/stderr" || fail "-Zq: wrong option named"
# control characters in an option value stay on one line
one_line 1 "--out with a newline" 2 -n 4 --out "$T/no/such
dir.h5"
echo "odegen_hostile: every case ends cleanly"
