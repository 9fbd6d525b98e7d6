#!/bin/sh
# data_digits.sh - real data sets no one here made, trained end to end
# (docs/train.md, "A real data set"): scikit-learn's handwritten digits
# (1,797 8x8 images, 10 classes; Debian's python3-sklearn ships them),
# converted by data/datasets.py with a seeded split (the last 20% test),
# trained by hpc-train --loss cross-entropy at 1 and 2 ranks, and in the
# same run by scikit-learn's MLPClassifier and PyTorch with the same
# split, architecture (64-64-10, relu), Adam, batch and epochs
# (data/peers.py): hpc-train's test accuracy must be at least 95%, the
# same within a point at 1 and 2 ranks, and within 2 points of PyTorch's
# (the goal is 1; the test set is 359 images, one point 3.6 of them, and
# PyTorch's own seeds move it by about one).  The diabetes regression set
# the same way with MSE: within 10% of the better peer.  Skips (77)
# without scikit-learn.
. "$top_srcdir/tests/train_lib.sh"
need_numpy
"$PYTHON" -c 'import sklearn' 2> /dev/null || { echo "SKIP: no scikit-learn (python3-sklearn)"; exit 77; }
H5CHECK=$top_builddir/apps/h5check/hpc-h5check
opts="--act relu --optim adam --lr 1e-3 --batch 32 --val-fraction 0.2 -q"

"$PYTHON" "$top_srcdir/data/datasets.py" digits --out "$T/digits.h5" || fail "datasets.py digits"
"$PYTHON" "$top_srcdir/data/datasets.py" diabetes --out "$T/diabetes.h5" || fail "datasets.py diabetes"
"$H5CHECK" "$T/digits.h5" "$T/diabetes.h5" || fail "the data sets are not good files"
for np in 1 2; do
    train "$np" --data "$T/digits.h5" --loss cross-entropy --layers 64,64,10 --epochs 20 $opts --out "$T/digits$np" ||
        fail "digits at $np ranks"
done
train 1 --data "$T/diabetes.h5" --layers 10,64,1 --epochs 100 $opts --out "$T/diabetes1" || fail "diabetes"
"$PYTHON" "$top_srcdir/data/peers.py" "$T/digits.h5" --hidden 64 --epochs 20 > "$T/digits.peers" || fail "peers.py digits"
"$PYTHON" "$top_srcdir/data/peers.py" "$T/diabetes.h5" --hidden 64 --epochs 100 > "$T/diabetes.peers" ||
    fail "peers.py diabetes"
"$PYTHON" - "$T" <<'PY' || fail "hpc-train does not learn the real data sets as its peers do"
import sys
import h5py
T = sys.argv[1]

def peers(name):
    out = {}
    for line in open(f"{T}/{name}.peers"):
        w = line.split()
        if len(w) == 5:
            out[w[0]] = float(w[2])
        else:
            print(line.strip())
    return out

def attr(run, name):
    with h5py.File(f"{T}/{run}/checkpoint.h5", "r") as f:
        return float(f.attrs[name])

ok = True
acc = {np: attr(f"digits{np}", "val_accuracy") for np in (1, 2)}
p = peers("digits")
print("digits, test accuracy (359 images): " + ", ".join(
    [f"hpc-train {acc[1]:.2%} (1 rank), {acc[2]:.2%} (2 ranks)"] + [f"{k} {v:.2%}" for k, v in p.items()]))
ok &= acc[1] >= 0.95 and acc[2] >= 0.95 and abs(acc[1] - acc[2]) <= 0.01
if "pytorch" in p:
    ok &= abs(acc[1] - p["pytorch"]) <= 0.02
mse = attr("diabetes1", "val_mse_data")
p = peers("diabetes")
print("diabetes, test MSE (88 patients): " + ", ".join([f"hpc-train {mse:.0f}"] + [f"{k} {v:.0f}" for k, v in p.items()]))
ok &= not p or mse <= 1.1 * min(p.values())
print("ok" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
echo "data_digits: hpc-train learns digits and diabetes as scikit-learn and PyTorch do"
