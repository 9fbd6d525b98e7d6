#!/bin/sh
# data_check.sh - every file kind every program writes, held against its
# schema (data/schemas) by hpc-h5check: hpc-odegen's output at 1-3 ranks,
# its shards and the joined file; hpc-train's checkpoint and metrics.csv
# at 1-3 ranks (data parallel, --shard params, --parallel pipe, MSE and
# cross-entropy); hpc-matmul's output and saved inputs at 1-3 ranks.  Then
# files that are not good: each one line "FILE: /path: problem" and exit 1
# from hpc-h5check, and the same problem as one line and exit 1 from the
# program that takes the file as its input, before it computes anything.
. "$top_srcdir/tests/train_lib.sh"
need_numpy
H5CHECK=$top_builddir/apps/h5check/hpc-h5check
MATMUL=$top_builddir/apps/matmul/hpc-matmul
run() {
    np=$1
    shift
    if [ "$np" = 1 ]; then "$@"; else "$MPIEXEC_WRAP" -n "$np" "$@"; fi
}

# good KIND FILE...: each file is a good KIND ("FILE: ok, KIND")
good() {
    kind=$1
    shift
    "$H5CHECK" "$@" > "$T/out" 2>&1 || { cat "$T/out" >&2; fail "$kind: $* not good"; }
    n=$(grep -c ": ok, $kind\$" "$T/out")
    [ "$n" = $# ] || { cat "$T/out" >&2; fail "$*: not each a $kind"; }
    echo "ok: $kind: $*" | sed "s|$T/||g"
}

# bad PATTERN FILE [OPTIONS]: exit 1, one problem line naming FILE, matching PATTERN
bad() {
    pat=$1
    shift
    rc=0
    "$H5CHECK" "$@" > "$T/out" 2> "$T/stderr" || rc=$?
    [ "$rc" = 1 ] || { cat "$T/out" "$T/stderr" >&2; fail "$1: exit $rc, expected 1"; }
    [ "$(grep -c . "$T/out")" = 1 ] || { cat "$T/out" >&2; fail "$1: not one problem line"; }
    grep -q "^$1: $pat" "$T/out" || { cat "$T/out" >&2; fail "$1: expected '$1: $pat'"; }
    echo "ok: $(sed "s|$T/||g" "$T/out")"
}

# refused PATTERN PROGRAM ARGS...: one line naming the problem, exit 1
refused() {
    pat=$1
    shift
    rc=0
    "$@" > /dev/null 2> "$T/stderr" || rc=$?
    one_line_error "$rc" 1 "$pat" "$(basename "$1")"
    grep -q "$pat" "$T/stderr" || { cat "$T/stderr" >&2; fail "expected '$pat'"; }
    echo "ok: refused: $(sed "s|$T/||g" "$T/stderr")"
}

# ---- what the programs write ----
"$MKDATA" regress "$T/xy.h5" 120 || fail "making xy.h5"
"$MKDATA" classes "$T/cls.h5" 120 || fail "making cls.h5"
good train-xy "$T/xy.h5"
good train-labels "$T/cls.h5"
for np in 1 2 3; do
    run "$np" "$ODEGEN" -q -s lorenz -n 9 --nt 5 --t1 0.5 --out "$T/ode$np.h5" || fail "odegen at $np ranks"
    run "$np" "$MATMUL" -q --gen 7,5,6 --save-inputs --out "$T/mm$np.h5:/C" || fail "matmul at $np ranks"
    train "$np" -q --data "$T/xy.h5" --steps 4 --batch 8 --eval-every 2 --log-every 1 --out "$T/mse$np" ||
        fail "train (MSE) at $np ranks"
    train "$np" -q --data "$T/cls.h5" --loss cross-entropy --layers 4,8,3 --steps 4 --batch 8 \
        --eval-every 2 --out "$T/ce$np" || fail "train (cross-entropy) at $np ranks"
    good odegen "$T/ode$np.h5"
    good matmul-output "$T/mm$np.h5"
    good matrix "$T/mm$np.h5:/A" "$T/mm$np.h5:/B" "$T/mm$np.h5:/C"
    good checkpoint "$T/mse$np/checkpoint.h5" "$T/ce$np/checkpoint.h5"
    good metrics "$T/mse$np/metrics.csv" "$T/ce$np/metrics.csv"
done
train 2 -q --data "$T/xy.h5" --steps 4 --batch 8 --shard params --out "$T/shard" || fail "train --shard params"
train 3 -q --data "$T/xy.h5" --steps 4 --batch 8 --parallel pipe --micro 2 --out "$T/pipe" ||
    fail "train --parallel pipe"
good checkpoint "$T/shard/checkpoint.h5" "$T/pipe/checkpoint.h5"
# a model as hpckit_torch.save_init writes it: /model of a checkpoint
"$PYTHON" - "$T/mse1/checkpoint.h5" "$T/model.h5" <<'PY' || fail "making model.h5"
import sys
import h5py
with h5py.File(sys.argv[1], "r") as c, h5py.File(sys.argv[2], "w") as m:
    c.copy("model", m)
    m.attrs["activation"] = c.attrs["activation"]
PY
good model "$T/model.h5"
# the cross-entropy run's accuracy: metrics.csv's last column, a share
tail -n 1 "$T/ce1/metrics.csv" | awk -F, '!($10 >= 0 && $10 <= 1 && $10 != "") { exit 1 }' ||
    fail "val_accuracy is not a share: $(tail -n 1 "$T/ce1/metrics.csv")"
# a job array's shards, each an odegen file, and the joined file
for i in 0 1 2; do
    run 1 "$ODEGEN" -q -s lorenz -n 9 --nt 5 --t1 0.5 --shard "$i/3" --out "$T/arr.h5" || fail "shard $i"
done
run 1 "$ODEGEN" -q --join 3 --out "$T/arr.h5" || fail "join"
good odegen "$T"/arr-shard000?-of0003.h5
good odegen-joined "$T/arr.h5"

# ---- files that are not good ----
"$MKDATA" nan "$T/nan.h5" 30 || fail "making nan.h5"
"$MKDATA" negative "$T/neg.h5" 30 || fail "making neg.h5"
"$MKDATA" noy "$T/noy.h5" 30 || fail "making noy.h5"
"$MKDATA" xint "$T/xint.h5" 30 || fail "making xint.h5"
bad "/X: NaN at \[10, 1\] where no NaN" "$T/nan.h5"
bad "/Y: -1 at \[10\] below 0" "$T/neg.h5"
bad "/Y: missing (\[N, O\] float" "$T/noy.h5" --kind train-xy
bad "/X: int32, expected float" "$T/xint.h5" --kind train-xy
refused "\-\-data $T/noy.h5: /Y: missing" "$TRAIN" -q --data "$T/noy.h5" --steps 1 --out "$T/r0"
refused "\-\-data $T/xint.h5: /X: int32, expected float" "$TRAIN" -q --data "$T/xint.h5" --steps 1 --out "$T/r1"
[ ! -e "$T/r0" ] && [ ! -e "$T/r1" ] || fail "a refused run left its folder"
# a joined file without one of its shards
mv "$T/arr-shard0001-of0003.h5" "$T/gone.h5"
bad ".*arr-shard0001-of0003.h5" "$T/arr.h5"
refused "arr-shard0001-of0003.h5" "$TRAIN" -q --data "$T/arr.h5" --steps 1 --out "$T/r2"
mv "$T/gone.h5" "$T/arr-shard0001-of0003.h5"
# a checkpoint of another layout version: --resume refuses it
cp -r "$T/mse1" "$T/v2"
"$PYTHON" -c 'import h5py, sys; h5py.File(sys.argv[1], "r+").attrs["format_version"] = 2' "$T/v2/checkpoint.h5" ||
    fail "editing the checkpoint"
bad "attribute format_version is 2, expected 1" "$T/v2/checkpoint.h5"
refused "format_version is 2, expected 1" "$TRAIN" -q --data "$T/xy.h5" --steps 8 --batch 8 --resume --out "$T/v2"
# an odegen file without /y
cp "$T/ode1.h5" "$T/noyy.h5"
"$PYTHON" -c 'import h5py, sys; del h5py.File(sys.argv[1], "r+")["y"]' "$T/noyy.h5" || fail "editing ode1.h5"
bad "/y: missing" "$T/noyy.h5" --kind odegen
# a matrix of one dimension given to hpc-matmul (its own test has more)
bad "/t: \[5\] has 1 dimension, expected \[R, K\]" "$T/ode1.h5:/t"
# metrics.csv: a row with a field missing, a step that does not grow
sed -e '3s/,[^,]*$//' "$T/mse1/metrics.csv" > "$T/m1.csv"
bad "line 3: 9 fields, expected 10" "$T/m1.csv"
awk -F, -v OFS=, 'NR == 3 { $1 = 1 } 1' "$T/mse1/metrics.csv" > "$T/m2.csv"
bad "line 3: column step: 1 does not grow" "$T/m2.csv"
# not a file of any kind, a kind there is not
bad "not a file of any kind hpckit knows" "$top_srcdir/README.md"
rc=0
"$H5CHECK" --kind nosuch "$T/xy.h5" > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--kind nosuch: exit $rc, expected 2"
echo "data_check: every file the programs write is good; each bad one is one line, exit 1"
