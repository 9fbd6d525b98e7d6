#!/bin/sh
# train_data.sh - what hpc-train makes of its data, against numpy reading
# the same files with h5py: the normalisation statistics stored in the
# checkpoint are the training samples' mean and population standard
# deviation - for an hpc-odegen file over the flow-map pairs of the
# trajectories with status 0, less the last --val-fraction of them, for
# target next and delta; for /X,/Y in float32 over the first rows - and
# they are the same bits at 1 and 3 ranks.  Skips (77) without numpy/h5py.
. "$top_srcdir/tests/train_lib.sh"
need_numpy
need_h5diff
# lorenz with an attempt limit that 4 of 12 trajectories exceed
"$ODEGEN" -q -s lorenz -n 12 --nt 6 --t1 2 --max-steps 27 --out "$T/ode.h5" || fail "making ode.h5"
"$MKDATA" regress32 "$T/r.h5" 200 || fail "making r.h5"
init="--epochs 0 --batch 8 -q"
train 1 $init --data "$T/ode.h5" --val-fraction 0.25 --out "$T/next" || fail "next"
train 3 $init --data "$T/ode.h5" --val-fraction 0.25 --out "$T/next3" || fail "next, 3 ranks"
train 1 $init --data "$T/ode.h5" --val-fraction 0.25 --target delta --out "$T/delta" || fail "delta"
train 2 $init --data "$T/r.h5" --val-fraction 0.1 --out "$T/xy" || fail "X,Y"
"$H5DIFF" -q "$T/next/checkpoint.h5" "$T/next3/checkpoint.h5" /norm /norm || fail "statistics differ at 3 ranks"
echo "ok: the statistics are the same bits at 1 and 3 ranks"
"$PYTHON" - "$T" <<'PY' || fail "statistics differ from numpy"
import sys
import h5py
import numpy as np
T = sys.argv[1]
bad = 0

def compare(name, ckpt, x, y):
    global bad
    with h5py.File(ckpt, "r") as f:
        got = [f["norm/" + k][()] for k in ("x_mean", "x_std", "y_mean", "y_std")]
        samples = f.attrs["samples"]
    want = [x.mean(axis=0), x.std(axis=0), y.mean(axis=0), y.std(axis=0)]
    err = max(float(np.max(np.abs(g - w) / np.abs(w))) for g, w in zip(got, want))
    ok = err < 1e-12
    bad += not ok
    print(f"{'ok' if ok else 'FAIL'}: {name}: {len(x)} training samples, statistics within {err:.2g} ({samples})")

with h5py.File(f"{T}/ode.h5", "r") as f:
    y, t, st = f["y"][()], f["t"][()], f["stats/status"][()]
good = y[st == 0]                                 # 8 of 12
train = good[: len(good) - round(0.25 * len(good))]   # the last 2 validate
n, nt, d = train.shape
x = np.concatenate([train[:, :-1], np.broadcast_to(t[:-1, None], (n, nt - 1, 1))], axis=2).reshape(-1, d + 1)
compare("hpc-odegen, target next", f"{T}/next/checkpoint.h5", x, train[:, 1:].reshape(-1, d))
compare("hpc-odegen, target delta", f"{T}/delta/checkpoint.h5", x, (train[:, 1:] - train[:, :-1]).reshape(-1, d))
with h5py.File(f"{T}/r.h5", "r") as f:
    X, Y = f["X"][()].astype(np.float64), f["Y"][()].astype(np.float64)
compare("/X,/Y float32", f"{T}/xy/checkpoint.h5", X[:180], Y[:180])
sys.exit(1 if bad else 0)
PY
echo "train_data: the data is read as documented"
