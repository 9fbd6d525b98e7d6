#!/bin/sh
# matmul_hostile.sh - hpc-matmul under careless or hostile input (issue 22):
#   - a product no node can hold is refused before anything is allocated
#     or written: one line naming what it needs and what is available
#     (once: --gen 100000,100000,100000 mapped 80 GB blocks first);
#   - an empty (0-row, 0-column) input is named (once: HDF5's "H5Dread:
#     addr overflow");
#   - NaN or infinity in an input is refused by default, naming the matrix
#     and the first bad index; with --allow-nonfinite --verify compares
#     the rows and columns they reach exactly, so a wrong element next to
#     a NaN, or in its row or column, fails (once: "verify passed
#     (residual 0 of the bound)" whatever C held).
# At 1 to 4 ranks (grids 1x1, 1x2, 1x3, 2x2).
B=${top_builddir:-.}
MM=$B/apps/matmul/hpc-matmul
T=$(mktemp -d "${TMPDIR:-/tmp}/matmul_hostile.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/err" 2>/dev/null; exit 1; }
mm() { np=$1; shift; $MPIEXEC_WRAP -n "$np" "$MM" -q "$@" 2> "$T/err"; }

# refused CODE PATTERN NP ARGS...: one line matching PATTERN, exit CODE, no output
refused() {
    code=$1 pattern=$2 np=$3
    shift 3
    mm "$np" "$@" > /dev/null
    rc=$?
    [ $rc = "$code" ] || fail "$*: exit $rc, expected $code"
    [ "$(grep -c . "$T/err")" = 1 ] && grep -q "^hpc-matmul: .*$pattern" "$T/err" ||
        fail "$*: not one line with '$pattern'"
    [ ! -e "$T/out.h5" ] && [ ! -e "$T/out.h5.partial" ] || fail "$*: left an output"
    echo "ok: $np ranks $* -> $(cat "$T/err")"
}

# memory: 8 TB a matrix, on every rank count; nothing written
refused 1 "needs .* GiB per rank, .* for the 1 ranks on this node (.*), but .* GiB is available there" 1 \
    --gen 1000000,1000000,1000000 --out "$T/out.h5:/C"
refused 1 "needs .* but .* is available" 3 --gen 1000000,1000000,1000000 --verify --out "$T/out.h5:/C"

[ -n "$PYTHON_SCI" ] || { echo "SKIP: the file cases need Python with numpy and h5py"; exit 77; }
"$PYTHON_SCI" - "$T/in.h5" <<'EOF' || fail "making the inputs"
import sys, h5py, numpy as np
rng = np.random.default_rng(1)
A = rng.uniform(-1, 1, (20, 15)); B = rng.uniform(-1, 1, (15, 12))
with h5py.File(sys.argv[1], "w") as f:
    f["A"], f["B"] = A, B
    Bn = B.copy(); Bn[3, 4] = np.nan; f["Bnan"] = Bn
    Ai = A.copy(); Ai[7, 2] = np.inf; Ai[11, 0] = -np.inf; f["Ainf"] = Ai
    f["E"], f["BE"] = np.zeros((0, 15)), np.zeros((15, 0))
EOF
in=$T/in.h5
refused 1 "A is empty: .*in.h5:/E is 0 x 15" 2 --a "$in:/E" --b "$in:/B" --out "$T/out.h5:/C"
refused 1 "B is empty: .*in.h5:/BE is 15 x 0" 1 --a "$in:/A" --b "$in:/BE" --out "$T/out.h5:/C"
refused 1 "B (.*in.h5:/Bnan) holds NaN at row 3, column 4" 2 --a "$in:/A" --b "$in:/Bnan" --verify \
    --out "$T/out.h5:/C"
refused 1 "A (.*in.h5:/Ainf) holds +inf at row 7, column 2" 4 --a "$in:/Ainf" --b "$in:/B" --out "$T/out.h5:/C"

# allowed: the product of both, checked, on every grid; C's NaN and
# infinities where numpy's are, the rest within 1e-12
for np in 1 2 3 4; do
    rm -f "$T/c$np.h5"
    mm $np --a "$in:/Ainf" --b "$in:/Bnan" --allow-nonfinite --verify --nb 4 --out "$T/c$np.h5:/C" ||
        fail "$np ranks: --allow-nonfinite --verify of a right product: exit $?"
    "$PYTHON_SCI" - "$in" "$T/c$np.h5" <<'EOF' || fail "$np ranks: C against numpy"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    ref = f["Ainf"][...] @ f["Bnan"][...]
with h5py.File(sys.argv[2], "r") as f:
    C, a = f["C"][...], f["C"].attrs
    assert int(a["verify_nonfinite_rows"]) == 2 and int(a["verify_nonfinite_columns"]) == 1, dict(a)
assert (np.isnan(C) == np.isnan(ref)).all() and (np.isposinf(C) == np.isposinf(ref)).all() \
    and (np.isneginf(C) == np.isneginf(ref)).all(), "non-finite pattern"
fin = np.isfinite(ref)
assert fin.sum() == 18 * 11 and np.abs(C[fin] - ref[fin]).max() < 1e-12
EOF
done
echo "ok: --allow-nonfinite --verify at 1-4 ranks: NaN and infinities where numpy has them, the rest equal"

# planted errors: each must fail --verify (one line, exit 1, no C)
planted() {   # planted I,J[,V] NP A B WHAT
    HPC_MATMUL_TEST_CORRUPT=$1 mm "$2" --a "$in:/$3" --b "$in:/$4" --allow-nonfinite --verify --out "$T/out.h5:/C"
    rc=$?
    [ $rc = 1 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q "verify failed" "$T/err" ||
        fail "$5: exit $rc, not caught"
    [ ! -e "$T/out.h5" ] || fail "$5: C written"
    echo "ok: $5 ($2 ranks) -> $(cat "$T/err")"
}
planted 5,5 3 A Bnan "a wrong element beside the NaN column"
planted 5,5 4 Ainf Bnan "a wrong element beside NaN and infinity"
planted 2,4,0 4 A Bnan "0 where NaN belongs"
planted 7,0,nan 2 Ainf B "NaN where an infinity belongs"
"$PYTHON_SCI" -c "
import h5py, numpy as np
with h5py.File('$in', 'r') as f:
    r = f['Ainf'][...] @ f['B'][...]
print('7,0,%s' % ('-inf' if r[7, 0] > 0 else 'inf'))" > "$T/flip" || fail "the sign of C(7, 0)"
planted "$(cat "$T/flip")" 1 Ainf B "an infinity of the wrong sign"
grep -q "C(7, 0)" "$T/err" || fail "the wrong infinity is not named"
echo "matmul_hostile: all checks passed"
