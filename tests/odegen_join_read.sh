#!/bin/sh
# odegen_join_read.sh - a joined job array is an input like any other:
# three shards made by hand (--shard I/3, one --out) joined with --join 3;
# hpc-train on the joined file at 1 and 2 ranks ends with the very model,
# optimiser state and metrics (bit for bit) as on one un-sharded run's
# file; hpc-matmul multiplies the joined /x0 (a virtual dataset) into the
# same bits as the plain /x0, which the serial reference accepts.  With a
# shard moved away, hpc-train and hpc-matmul refuse the file with one
# line naming the missing shard (exit 1) at 1 and 2 ranks, and h5py
# reads its rows as NaN and status -127 (missing), never as zeros.
. "$top_srcdir/tests/train_lib.sh"
need_h5diff
[ -n "$H5DUMP" ] || { echo "SKIP: h5dump not found (hdf5-tools)"; exit 77; }
MM=$top_builddir/apps/matmul/hpc-matmul
CHECK=$top_builddir/tests/matmul_check
odegen() { np=$1; shift; "$MPIEXEC_WRAP" -n "$np" "$ODEGEN" -q "$@"; }
ARGS="-n 300 --nt 9 --seed 5 -s lorenz"
odegen 2 $ARGS --out "$T/one.h5" || fail "one run"
mkdir "$T/sh"
for i in 0 1 2; do odegen $((i % 2 + 1)) $ARGS --shard $i/3 --out "$T/sh/ode.h5" || fail "shard $i"; done
odegen 1 --join 3 --out "$T/sh/ode.h5" || fail "join"
for d in /x0 /y /stats/status; do "$H5DIFF" -q "$T/one.h5" "$T/sh/ode.h5" $d $d || fail "joined $d differs"; done

targs="--layers 4,16,3 --steps 30 --batch 40 --log-every 1 -q"
for np in 1 2; do
    train $np --data "$T/one.h5" $targs --out "$T/plain$np" || fail "training on the plain file, $np ranks"
    train $np --data "$T/sh/ode.h5" $targs --out "$T/joined$np" || fail "training on the joined file, $np ranks"
    same_run "$T/plain$np" "$T/joined$np" "hpc-train on the joined file, np=$np"
done

# B [3 x 4] from --gen; A = /x0 [300 x 3], joined and plain
"$MPIEXEC_WRAP" -n 1 "$MM" -q --gen 3,4,3 --seed 2 --save-inputs --out "$T/g.h5:/C" || fail "matmul --gen"
for np in 1 3; do
    "$MPIEXEC_WRAP" -n $np "$MM" -q --a "$T/one.h5:/x0" --b "$T/g.h5:/B" --out "$T/cp$np.h5:/C" || fail "matmul, plain A"
    "$MPIEXEC_WRAP" -n $np "$MM" -q --a "$T/sh/ode.h5:/x0" --b "$T/g.h5:/B" --out "$T/cj$np.h5:/C" ||
        fail "matmul on the joined /x0, $np ranks"
    # the values alone (the attributes hold the wall time): raw bytes
    for c in cp cj; do "$H5DUMP" -d /C -b LE -o "$T/$c.bin" "$T/$c$np.h5" > /dev/null || fail "h5dump $c$np.h5"; done
    cmp -s "$T/cp.bin" "$T/cj.bin" || fail "matmul: C from the joined /x0 differs (np=$np)"
done
"$CHECK" "$T/one.h5:/x0" "$T/g.h5:/B" "$T/cj3.h5:/C" > "$T/check" || { cat "$T/check"; fail "matmul_check"; }
echo "ok: hpc-matmul reads the joined /x0 as the plain one: $(cat "$T/check")"

step "a shard moved away"
mkdir "$T/away"
mv "$T/sh/ode-shard0001-of0003.h5" "$T/away/"
refused() {   # refused WHAT PROGRAM COMMAND...: exit 1, one line naming the shard
    what=$1 prog=$2
    shift 2
    "$@" > /dev/null 2> "$T/stderr"
    one_line_error $? 1 "$what" "$prog"
    grep -q "ode-shard0001-of0003.h5.*missing" "$T/stderr" || { cat "$T/stderr"; fail "$what: the line does not name the shard"; }
    echo "ok: $what: $(cat "$T/stderr")"
}
for np in 1 2; do
    refused "hpc-train, $np ranks" hpc-train train $np --data "$T/sh/ode.h5" $targs --out "$T/miss$np"
    [ ! -e "$T/miss$np/checkpoint.h5" ] || fail "hpc-train wrote a checkpoint from a file missing a shard"
    refused "hpc-matmul, $np ranks" hpc-matmul "$MPIEXEC_WRAP" -n $np "$MM" -q --a "$T/sh/ode.h5:/x0" \
        --b "$T/g.h5:/B" --out "$T/cm$np.h5:/C"
    [ ! -e "$T/cm$np.h5" ] || fail "hpc-matmul wrote a product of a file missing a shard"
done
if "$PYTHON" -c 'import numpy, h5py' > /dev/null 2>&1; then
    (cd / && "$PYTHON" - "$T/sh/ode.h5" "$T/one.h5" <<'EOF') || fail "h5py: the missing shard's rows"
import sys, h5py, numpy as np
j, o = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
lo, hi = 300 * 1 // 3, 300 * 2 // 3       # shard 1 of 3
y, x0, st = j["y"][...], j["x0"][...], j["stats/status"][...]
assert np.isnan(y[lo:hi]).all() and np.isnan(x0[lo:hi]).all(), "missing rows are not NaN"
assert (st[lo:hi] == -127).all(), set(st[lo:hi])
for name in ("stats/nsteps", "stats/nfev", "stats/nrejected", "traj"):
    assert (j[name][lo:hi] == -1).all(), name
keep = np.r_[0:lo, hi:300]
assert np.array_equal(y[keep], o["y"][...][keep]) and (st[keep] == o["stats/status"][...][keep]).all()
print("ok: h5py: rows %d..%d read as NaN, status -127, counts -1; the rest as one run" % (lo, hi - 1))
EOF
else
    echo "(no numpy/h5py: the fill values are not looked at)"
fi
# the Python helper refuses it too, naming the shard, where it once
# returned the 200 rows of the other shards as the whole split; with the
# shard back it reads the split hpc-train trained on
if "$PYTHON" -c 'import torch, numpy, h5py' > /dev/null 2>&1; then
    "$PYTHON" - "$top_srcdir/apps/train" "$T/joined1" "$T/away/ode-shard0001-of0003.h5" "$T/sh/" <<'EOF' ||
import sys, shutil
sys.path.insert(0, sys.argv[1])
import hpckit_torch as hk
model, norm, meta = hk.load(sys.argv[2])
for split in ("val", "train"):
    try:
        x, y = hk.samples(meta, split)
    except ValueError as e:
        assert "ode-shard0001-of0003.h5" in str(e) and "missing" in str(e), str(e)
        print("ok: hpckit_torch.samples(meta, %r): %s" % (split, e))
    else:
        raise SystemExit("samples(meta, %r) returned %d samples of a file missing a shard" % (split, len(x)))
shutil.move(sys.argv[3], sys.argv[4])
x, y = hk.samples(meta, "train")
assert len(x) == meta["train_samples"], (len(x), meta["train_samples"])
x, y = hk.samples(meta, "val")
assert len(x) == meta["val_samples"], (len(x), meta["val_samples"])
print("ok: hpckit_torch.samples with the shard back: %d validation samples" % len(x))
EOF
        fail "hpckit_torch.samples on a file missing a shard"
else
    echo "(no torch: hpckit_torch is not tried)"
fi
echo "odegen_join_read: a joined file reads like a plain one, and not at all without its shards"
