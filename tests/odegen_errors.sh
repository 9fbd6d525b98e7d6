#!/bin/sh
# odegen_errors.sh - every bad input gives one clear line on stderr (from
# rank 0 only: the expect2 cases run on 2 ranks through the launcher, the
# rest as singletons to keep the test quick), a non-zero exit (2 for a bad
# option or value, 1 for bad data or I/O), and no file under the final name.
. "$top_srcdir/tests/odegen_lib.sh"
OUT=$T/out.h5

expect() {   # expect CODE WHAT ARGS...: the run must fail with CODE
    code=$1 what=$2
    shift 2
    if [ "${NP:-1}" = 1 ]; then   # singleton MPI: no launcher start-up per case
        "$ODEGEN" "$@" > "$T/stdout" 2> "$T/stderr"
    else
        odegen "$NP" "$@" > "$T/stdout" 2> "$T/stderr"
    fi
    one_line_error $? "$code" "$what" hpc-odegen
    [ ! -e "$OUT" ] || fail "$what: left $OUT"
    echo "ok: $what -> $(cat "$T/stderr")"
}
expect2() { NP=2; expect "$@"; NP=1; }

expect2 2 "unknown system" -s lorentz --out "$OUT"
expect 2 "wrong parameter name" -s lorenz -p mu=3 --out "$OUT"
expect 2 "parameter for a system without any" -p k=1 --out "$OUT"
expect 2 "bad parameter value" -s vanderpol -p mu=abc --out "$OUT"
expect 2 "dim a system does not allow" -s lorenz -d 4 --out "$OUT"
expect 2 "dim 0" -d 0 --out "$OUT"
expect2 2 "t1 <= t0" --t0 5 --t1 5 --out "$OUT"
expect 2 "NT < 2" --nt 1 --out "$OUT"
expect 2 "rtol <= 0" --rtol 0 --out "$OUT"
expect 2 "rtol negative" --rtol -1e-3 --out "$OUT"
expect 2 "atol negative" --atol -1 --out "$OUT"
expect 2 "N <= 0" -n 0 --out "$OUT"
expect 2 "N not a number" -n 10k --out "$OUT"
expect 2 "first step beyond t1" --first-step 11 --out "$OUT"
expect 2 "max step <= 0" --max-step 0 --out "$OUT"
expect 2 "x0-low > x0-high" --x0-low 2 --x0-high 1 --out "$OUT"
expect 2 "bad --x0-normal" --x0-normal 1 --out "$OUT"
expect 2 "unknown option" --frobnicate --out "$OUT"
expect 2 "unknown method" --method RK4 --out "$OUT"
expect2 2 "SDIRK (not in this release)" --method SDIRK --out "$OUT"
expect 2 "scipy's Radau" --method radau --out "$OUT"
expect 2 "missing value" --out
expect 2 "no --out" -n 10
expect 2 "--resume with --force" --resume --force --out "$OUT"
expect 2 "unknown device" --device tpu --out "$OUT"
expect2 1 "unwritable output" -n 10 --out "$T/no/such/dir/out.h5"

# an existing output is never overwritten without --force/--resume
odegen 1 -q -n 20 --out "$OUT" || fail "making $OUT"
cksum "$OUT" > "$T/sum"
mv "$OUT" "$T/keep.h5"
cp "$T/keep.h5" "$T/exists.h5"
OUT=$T/missing.h5
odegen 2 -n 20 --out "$T/exists.h5" 2> "$T/stderr" && fail "overwrote an existing output"
[ "$(grep -c . "$T/stderr")" = 1 ] || fail "existing output: not one line"
cmp -s "$T/keep.h5" "$T/exists.h5" || fail "existing output was modified"
echo "ok: existing output -> $(cat "$T/stderr")"
odegen 2 -q -n 20 --force --out "$T/exists.h5" || fail "--force"

# --resume on a file from other options
odegen 1 -q -n 64 --chunk 8 --out "$T/r.h5" || fail "making r.h5"
mv "$T/r.h5" "$T/r.h5.partial"
OUT=$T/r.h5
expect2 1 "--resume with a different rtol" -n 64 --chunk 8 --rtol 1e-4 --resume --out "$OUT"
expect 1 "--resume with a different system" -s vanderpol -n 64 --chunk 8 --resume --out "$OUT"

# --resume on a damaged .partial: one line, and it stays for inspection
OUT=$T/dam.h5
echo "not HDF5" > "$OUT.partial"
expect 1 "--resume on a damaged .partial" -n 64 --resume --out "$OUT"

# a .partial that holds computed rows (HDF5's signature at its start) but
# that HDF5 cannot open - cut to half, 64 bytes of its root B-tree or of
# its heap overwritten - is refused and kept byte for byte (once: called
# "a set-up that never completed", discarded and computed again); the
# addresses are those of the superblock (version 0) of this very file
odegen 1 -q -n 576 --chunk 64 --out "$T/full.h5" || fail "making full.h5"
h5addr() {   # h5addr BYTE: the 8-byte address at BYTE of full.h5
    od -A n -t u8 -j "$1" -N 8 "$T/full.h5" | tr -d ' '
}
# the root group's symbol table entry at 56, its scratch pad: B-tree, heap
btree=$(h5addr 80) heap=$(h5addr 88)
[ "$btree" -gt 0 ] && [ "$heap" -gt "$btree" ] || fail "full.h5: no B-tree and heap addresses ($btree, $heap)"
[ "$(head -c 4 "$T/full.h5" | od -A n -c | tr -d ' ')" = "211HDF" ] || fail "full.h5 is not HDF5"
for how in half btree heap; do
    OUT=$T/dam-$how.h5
    cp "$T/full.h5" "$OUT.partial"
    case $how in
        half) truncate -s $(($(wc -c < "$T/full.h5") / 2)) "$OUT.partial" ;;
        btree) head -c 64 /dev/zero | tr '\0' '\253' | dd of="$OUT.partial" bs=1 seek="$btree" conv=notrunc 2> /dev/null ;;
        heap) head -c 64 /dev/zero | tr '\0' '\253' | dd of="$OUT.partial" bs=1 seek="$heap" conv=notrunc 2> /dev/null ;;
    esac
    cp "$OUT.partial" "$T/dam.orig"
    expect2 1 "--resume on a .partial with data, damaged ($how)" -n 576 --chunk 64 --resume --out "$OUT"
    grep -q "dam-$how.h5.partial" "$T/stderr" || fail "damaged ($how): the .partial is not named"
    cmp -s "$T/dam.orig" "$OUT.partial" || fail "damaged ($how): the .partial was not kept as it was"
done
# what a run killed inside its set-up leaves (PATH.setup, and an empty
# .partial of an older hpckit) holds no data: started afresh
OUT=$T/torn.h5
head -c 5000 "$T/full.h5" > "$OUT.setup"
odegen 2 -q -n 64 --resume --out "$OUT" 2> "$T/stderr" || { cat "$T/stderr"; fail "--resume over a torn set-up"; }
grep -q "torn.h5.setup was left before its set-up was complete" "$T/stderr" || fail "torn set-up: no warning"
[ -e "$OUT" ] && [ ! -e "$OUT.setup" ] || fail "torn set-up: not replaced"
rm -f "$OUT"
: > "$OUT.partial"
odegen 1 -q -n 64 --resume --out "$OUT" 2> /dev/null || fail "--resume over an empty .partial"
echo "ok: a torn set-up starts afresh; a damaged .partial with data is refused and kept"
OUT=$T/dam.h5

# a malformed test hook is refused as a bad setting is, never read as 0
HPC_ODEGEN_TEST_KILL=1:2x expect2 2 "malformed HPC_ODEGEN_TEST_KILL" -n 64 --out "$OUT"
grep -q "HPC_ODEGEN_TEST_KILL='1:2x'" "$T/stderr" || fail "the line does not name HPC_ODEGEN_TEST_KILL"
HPC_ODEGEN_TEST_PACE=10ms expect 2 "malformed HPC_ODEGEN_TEST_PACE" -n 64 --out "$OUT"
expect 2 "--shard with trailing junk" --shard 1/4x -n 64 --out "$OUT"
# n x I beyond 64 bits: the real limit named (once: "this shard would
# hold no trajectory (N larger than -n)", from an overflow)
expect 2 "-n x N beyond 64 bits" -n 9223372036854775807 --shard 3/4 --out "$OUT"
grep -q -- "-n 9223372036854775807 with --shard I/4: n x N must fit in 64 bits (-n at most 2305843009213693951 for 4 shards)" "$T/stderr" ||
    fail "-n x N beyond 64 bits: the limit is not named"

# --device cuda where there is no GPU (or no CUDA module): a request this
# node cannot serve, one line naming what is missing, exit 2
if ! nvidia-smi -L > /dev/null 2>&1; then
    OUT=$T/gpu.h5
    expect2 2 "--device cuda without a GPU" --device cuda -n 10 --out "$OUT"
fi
echo "odegen_errors: all bad inputs rejected cleanly"
