#!/bin/sh
# bench_digits.sh [EPOCHS] - hpc-train against scikit-learn and PyTorch on
# the digits (docs/train.md, "A real data set"): the same split, model
# (64-64-10 relu), Adam, batch 32 and epochs (default 200, so that start-up
# does not count); prints each one's test accuracy and training samples/s
# side by side.  A benchmark, not a test: run it on a quiet machine, from
# the build tree (apps/train/hpc-train) or with HPC_TRAIN=PATH.
set -eu
epochs=${1:-200}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
train=${HPC_TRAIN:-apps/train/hpc-train}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_digits.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$py" "$here/datasets.py" digits --out "$tmp/digits.h5"
for np in 1 2; do
    launch=
    [ "$np" = 1 ] || launch="${MPIEXEC:-mpiexec} -n $np"
    $launch "$train" --data "$tmp/digits.h5" --loss cross-entropy --layers 64,64,10 --act relu --optim adam \
        --lr 1e-3 --batch 32 --epochs "$epochs" --val-fraction 0.2 --out "$tmp/run$np" 2>&1 | tail -n 1 |
        sed -n "s/.* \([0-9.]*k\{0,1\}\) samples\/s on \([0-9]*\) rank.*val accuracy \([0-9.]*%\).*/hpc-train ($np rank(s)) accuracy \3 samples_per_s \1/p"
done
"$py" "$here/peers.py" "$tmp/digits.h5" --hidden 64 --epochs "$epochs"
