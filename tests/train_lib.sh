# train_lib.sh - shared by the tests/train_*.sh scripts (sourced).
#
# Provides: $TRAIN, $MKDATA (tests/train_mkdata), $ODEGEN, $T (a scratch
# folder removed at exit), train NP ARGS... (NP 1: a singleton, quicker;
# otherwise through the configure-chosen launcher), losses RUNDIR (the
# "step train_loss" pairs of metrics.csv), close REF RUN WHAT TOL (every
# step's loss of RUN within TOL relative of REF's), same_run A B WHAT (two
# runs end alike, bit for bit; needs h5diff), fail MSG, need_h5diff, $H5DIFF,
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

close() {
    losses "$1" > "$T/a"
    losses "$2" > "$T/b"
    n=$(wc -l < "$T/a")
    paste -d' ' "$T/a" "$T/b" | awk -v what="$3" -v tol="$4" -v n="$n" '
        $1 != $3 { print what ": step " $1 " against " $3; bad = 1; exit }
        { d = $2 - $4; d = d < 0 ? -d : d; r = d / ($2 < 0 ? -$2 : $2); if (r > worst) worst = r }
        END { if (bad || NR != n || n == 0) exit 1; printf "ok: %s: %d losses within %.2g relative\n", what, n, worst
              exit !(worst <= tol) }' ||
        fail "$3: losses differ beyond $4"
}

# same_run A B WHAT: two run folders hold the same model, optimiser state
# and training metrics (columns 1-5 of metrics.csv), bit for bit
same_run() {
    "$H5DIFF" -q "$1/checkpoint.h5" "$2/checkpoint.h5" /model /model || fail "$3: /model differs"
    "$H5DIFF" -q "$1/checkpoint.h5" "$2/checkpoint.h5" /optim /optim || fail "$3: /optim differs"
    for r in "$1" "$2"; do cut -d, -f1-5 "$r/metrics.csv" > "$r.cols"; done
    cmp -s "$1.cols" "$2.cols" || { diff "$1.cols" "$2.cols" | head; fail "$3: metrics.csv differs"; }
    echo "ok: $3: the same model, optimiser state and metrics as the uninterrupted run"
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
