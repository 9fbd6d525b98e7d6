# train_lib.sh - shared by the tests/train_*.sh scripts (sourced).
#
# Provides: $TRAIN, $MKDATA (tests/train_mkdata), $ODEGEN, $T (a scratch
# folder removed at exit), train NP ARGS... (NP 1: a singleton, quicker;
# otherwise through the configure-chosen launcher), losses RUNDIR (the
# "step train_loss" pairs of metrics.csv), fail MSG, need_h5diff, $H5DIFF,
# need_torch (skips without a Python that has torch, numpy and h5py).
. "${top_srcdir:-.}/tests/testlib.sh" train
TRAIN=$top_builddir/apps/train/hpc-train
MKDATA=$top_builddir/tests/train_mkdata
ODEGEN=$top_builddir/apps/odegen/hpc-odegen

train() {
    np=$1
    shift
    if [ "$np" = 1 ]; then "$TRAIN" "$@"; else "$MPIEXEC_WRAP" -n "$np" "$TRAIN" "$@"; fi
}

losses() {
    awk -F, 'NR > 1 { print $1, $4 }' "$1/metrics.csv"
}

PYTHON=${PYTHON_SCI:-/usr/bin/python3}
need_torch() {
    "$PYTHON" -c 'import torch, numpy, h5py' > /dev/null 2>&1 ||
        { echo "SKIP: no Python with torch, numpy and h5py ($PYTHON; apt-get install python3-torch python3-h5py)"; exit 77; }
}
need_numpy() {
    "$PYTHON" -c 'import numpy, h5py' > /dev/null 2>&1 ||
        { echo "SKIP: no Python with numpy and h5py ($PYTHON)"; exit 77; }
}
