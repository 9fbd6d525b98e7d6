#!/bin/sh
# train_errors.sh - every bad input gives one clear line on stderr (from
# one rank: the expect2 cases run on 2 ranks), a non-zero exit (2 for a
# bad option or value, 1 for bad data or I/O), and no checkpoint under the
# final name; a loss that becomes NaN keeps the last good checkpoint.
. "$top_srcdir/tests/train_lib.sh"
RUN=$T/run

expect() {   # expect CODE WHAT ARGS...: the run must fail with CODE
    code=$1 what=$2
    shift 2
    train "${NP:-1}" "$@" > "$T/stdout" 2> "$T/stderr"
    one_line_error $? "$code" "$what" hpc-train
    [ -n "${KEEP:-}" ] || [ ! -e "$RUN/checkpoint.h5" ] || fail "$what: left $RUN/checkpoint.h5"
    echo "ok: $what -> $(cat "$T/stderr")"
}
expect2() { NP=2; expect "$@"; NP=1; }

"$MKDATA" regress "$T/r.h5" 64 || fail "making r.h5"
"$MKDATA" classes "$T/c.h5" 64 || fail "making c.h5"
for k in badlabel negative nan valnan noy mismatch xint; do "$MKDATA" $k "$T/$k.h5" 64 || fail "making $k.h5"; done
"$ODEGEN" -q -n 8 --nt 5 --out "$T/ode.h5" || fail "making ode.h5"
ok="--data $T/r.h5 --out $RUN --steps 3 --batch 16"

# options
expect2 2 "no --data" --out "$RUN"
expect 2 "no --out" --data "$T/r.h5"
expect 2 "--resume with --force" $ok --resume --force
expect 2 "layers with an empty size" $ok --layers 4,,2
expect 2 "layers with a size 0" $ok --layers 4,0,2
expect 2 "layers not numbers" $ok --layers four,two
expect 2 "one layer size" $ok --layers 4
expect2 2 "first layer does not fit the inputs" $ok --layers 5,8,2
expect 2 "last layer does not fit the targets" $ok --layers 4,8,3
expect 2 "hpc-odegen inputs are D+1" --data "$T/ode.h5" --out "$RUN" --layers 10,8,10
expect2 2 "batch smaller than the ranks" $ok --batch 1
expect 2 "batch x accum beyond the data" $ok --batch 40 --accum 2
expect 2 "lr 0" $ok --lr 0
expect 2 "lr negative" $ok --lr -1e-3
expect 2 "lr NaN" $ok --lr nan
expect 2 "lr infinite" $ok --lr inf
expect 2 "momentum with adam" $ok --momentum 0.9
expect 2 "nesterov without momentum" $ok --optim sgd --nesterov
expect 2 "betas out of range" $ok --betas 0.9,1
expect 2 "val fraction 1" $ok --val-fraction 1
expect 2 "unknown activation" $ok --act swish
expect 2 "unknown optimiser" $ok --optim lamb
expect 2 "unknown allreduce" $ok --allreduce-alg telepathy
expect 2 "bucket of 0 MiB" $ok --bucket-mb 0
expect 2 "unknown option" $ok --frobnicate
expect 2 "--mem-budget with a blank before a minus" $ok --mem-budget ' -5'

# pipelines (r.h5's default model has 3 layers)
expect2 2 "more stages than layers" $ok --parallel pipe --stages 4
expect2 2 "more stages than ranks" $ok --parallel hybrid --stages 3
expect2 2 "pipe with stages other than the ranks" $ok --parallel pipe --stages 1
expect2 2 "a partition that does not sum to the layers" $ok --parallel pipe --partition 1,1
expect2 2 "a partition of other stages" $ok --parallel pipe --partition 1,1,1
expect 2 "a partition with a zero" $ok --parallel pipe --partition 2,0
NP=3 expect 2 "D x S is not the ranks" $ok --parallel hybrid --stages 2
expect 2 "hybrid without --stages" $ok --parallel hybrid
expect 2 "micro-batches 0" $ok --parallel pipe --micro 0
expect 2 "more micro-batches than samples" $ok --parallel pipe --micro 17
expect 2 "a stale option with gpipe" $ok --parallel pipe --pipe-schedule gpipe --weight-stashing
expect 2 "gap-aware with 1f1b" $ok --parallel pipe --gap-aware
expect 2 "pipeline options with dp" $ok --stages 2
# given, not only set off their default (once: --pipe-schedule with dp
# ran, ignored)
expect 2 "--pipe-schedule with dp" $ok --pipe-schedule gpipe
grep -q "pipe-schedule is for --parallel pipe or hybrid" "$T/stderr" || fail "--pipe-schedule with dp: not named"
expect 2 "--pipe-schedule 1f1b (its default) with dp" $ok --pipe-schedule 1f1b
expect 2 "--micro 1 (its default) with dp" $ok --micro 1
expect 2 "--step-every 1 (its default) with 1f1b" $ok --parallel pipe --step-every 1
expect 2 "--accum 1 (its default) with a pipeline" $ok --parallel pipe --accum 1
expect 2 "clipping with stale" $ok --parallel pipe --pipe-schedule stale --clip 1
expect 2 "unknown schedule" $ok --parallel pipe --pipe-schedule zigzag
expect 2 "weight prediction without momentum" $ok --parallel pipe --pipe-schedule stale --optim sgd \
    --weight-prediction msnag
NP=1

# sharding and the memory budget
expect 2 "unknown shard level" $ok --shard everything
expect2 2 "--shard with a pipeline of no replicas" $ok --parallel pipe --shard optim
expect 2 "--shard params with a hybrid pipeline" $ok --parallel hybrid --stages 2 --shard params
expect 2 "--shard grads with a hybrid pipeline" $ok --parallel hybrid --stages 2 --shard grads
expect 2 "a memory budget that is not a size" $ok --mem-budget lots

# data
expect2 1 "missing file" --data "$T/none.h5" --out "$RUN"
expect 1 "not HDF5" --data "$top_srcdir/tests/train_lib.sh" --out "$RUN"
expect2 1 "no /Y" --data "$T/noy.h5" --out "$RUN"
expect 1 "/X and /Y of different lengths" --data "$T/mismatch.h5" --out "$RUN"
expect 1 "/X of integers" --data "$T/xint.h5" --out "$RUN"
expect2 1 "label out of range" --data "$T/badlabel.h5" --loss cross-entropy --layers 4,8,3 --out "$RUN"
expect 1 "negative label" --data "$T/negative.h5" --loss cross-entropy --out "$RUN"
expect 1 "labels for mse" --data "$T/c.h5" --out "$RUN"
expect 1 "floats for cross-entropy" --data "$T/r.h5" --loss cross-entropy --out "$RUN"
expect2 1 "NaN in the data" --data "$T/nan.h5" --out "$RUN" --batch 16
grep -q "training sample 21 (row 21 of /X, /Y) holds NaN" "$T/stderr" || fail "NaN: the row is not named"
# an infinity only in a validation row: once accepted, the validation loss
# silently gone from the summary and metrics.csv
expect2 1 "infinity in a validation row" --data "$T/valnan.h5" --out "$RUN" --batch 16
grep -q "validation sample 63 (row 63 of /X, /Y) holds NaN or infinite" "$T/stderr" || fail "valnan: the row is not named"
NP=3 expect 1 "infinity in a validation row at 3 ranks" --data "$T/valnan.h5" --out "$RUN" --batch 16
expect 1 "cross-entropy on an hpc-odegen file" --data "$T/ode.h5" --loss cross-entropy --out "$RUN"
expect2 1 "unwritable RUNDIR" $ok --out /proc/hpc-train-run
touch "$T/afile"
expect 1 "RUNDIR is a file" --data "$T/r.h5" --out "$T/afile" --batch 16

# memory: 4,200000,200000,2 is 4e10 parameters (745 GiB on the CPU with
# Adam): refused on every rank before any allocation, and no run folder
# made (once: gigabytes mapped first, then the OOM killer)
rm -rf "$RUN"
expect2 1 "a model no node can hold" $ok --layers 4,200000,200000,2
grep -q "a model of 4000.* parameters (3 layers) on 8 rows a rank needs .* GiB per rank, .* GiB for the 2 ranks on this node (.*), but .* GiB is available there" "$T/stderr" ||
    fail "memory: the need is not named"
[ ! -e "$RUN" ] || fail "memory: a run folder was left"
NP=3 expect 1 "a model no node can hold, 3 ranks" $ok --layers 4,200000,200000,2
[ ! -e "$RUN" ] || fail "memory: a run folder was left (3 ranks)"

# checkpoints
expect2 1 "--resume with no checkpoint" $ok --resume
train 1 -q $ok || fail "a good run"
KEEP=1
expect 1 "an existing checkpoint without --resume" $ok
expect2 1 "--resume with other layers" $ok --layers 4,32,2 --resume
grep -q "layers: 4,64,64,2 in the file, 4,32,2 now" "$T/stderr" || fail "the difference is not named"
expect 1 "--resume with another optimiser" $ok --optim sgd --resume
cp "$RUN/checkpoint.h5" "$T/good.h5"
head -c 3000 "$T/good.h5" > "$RUN/checkpoint.h5"
expect2 1 "--resume from a truncated checkpoint" $ok --resume
echo "not a checkpoint" > "$RUN/checkpoint.h5"
expect 1 "--resume from a corrupt checkpoint" $ok --resume
KEEP=
rm -rf "$RUN"

# a malformed test hook is refused as a bad setting is, never read as 0
HPC_TRAIN_TEST_STOP=0:5.5 expect2 2 "malformed HPC_TRAIN_TEST_STOP" $ok
grep -q "HPC_TRAIN_TEST_STOP='0:5.5'" "$T/stderr" || fail "the line does not name HPC_TRAIN_TEST_STOP"
HPC_TRAIN_TEST_WINDOW=two expect 2 "malformed HPC_TRAIN_TEST_WINDOW" $ok
# --resume on other data of the same shape (float32 values of r.h5: every
# sample differs in its low bits): refused naming both, unless
# --data-changed-ok; a copy of the same data elsewhere is the same data
# (once: it continued on the other file silently)
"$MKDATA" regress32 "$T/r32.h5" 64 || fail "making r32.h5"
cp "$T/r.h5" "$T/rcopy.h5"
HPC_TRAIN_TEST_STOP=0:2 train 2 -q $ok --steps 6 --ckpt-every 1 2> /dev/null
[ $? = 75 ] || fail "data fingerprint: the run did not stop at step 2"
KEEP=1
expect2 1 "--resume on other data" --data "$T/r32.h5" --out "$RUN" --steps 6 --batch 16 --ckpt-every 1 --resume
grep -q "is not the data the checkpoint was trained on (.*r.h5: [0-9]* bytes, modified .*, checksum [0-9a-f]*; now [0-9]* bytes, modified .*, checksum [0-9a-f]*): continue on it with --data-changed-ok, or start over with --force" "$T/stderr" ||
    fail "other data: not named"
expect 2 "--data-changed-ok without --resume" --data "$T/r32.h5" --out "$RUN" --data-changed-ok --force
train 1 -q --data "$T/rcopy.h5" --out "$RUN" --steps 4 --batch 16 --ckpt-every 1 --resume 2> "$T/stderr" ||
    { cat "$T/stderr"; fail "--resume on a copy of the same data refused"; }
# the same size, one value of /X changed in place: the checksum tells
if [ -n "$H5DUMP" ]; then
    off=$("$H5DUMP" -p -H -d /X "$T/rcopy.h5" | sed -n 's/.*OFFSET \([0-9]*\).*/\1/p')
    [ -n "$off" ] || fail "no offset of /X"
    printf '\077' | dd of="$T/rcopy.h5" bs=1 seek=$((off + 1000)) conv=notrunc 2> /dev/null
    [ "$(wc -c < "$T/rcopy.h5")" = "$(wc -c < "$T/r.h5")" ] || fail "the patched copy changed size"
    expect 1 "--resume on the data changed in place" --data "$T/rcopy.h5" --out "$RUN" --steps 6 --batch 16 --resume
    size=$(wc -c < "$T/r.h5")
    grep -q "is not the data the checkpoint was trained on (.*rcopy.h5: $size bytes, .*; now $size bytes" "$T/stderr" ||
        fail "changed data: not named"
fi
train 2 -q --data "$T/r32.h5" --out "$RUN" --steps 6 --batch 16 --ckpt-every 1 --resume --data-changed-ok 2> "$T/stderr" ||
    { cat "$T/stderr"; fail "--resume --data-changed-ok refused"; }
echo "ok: --resume: a copy of the data continues, other data only with --data-changed-ok"
KEEP=
rm -rf "$RUN"

# --resume checks the data as a fresh start does: one value of validation
# row 595 of 600 (none of the 64 rows a sampled checksum would read)
# changed in place is other data; set to NaN it is bad data, with
# --data-changed-ok too (once: resumed with exit 0, "val loss" dropped
# from the summary, a checkpoint with val_loss NaN)
if [ -n "$H5DUMP" ]; then
    "$MKDATA" regress "$T/r600.h5" 600 || fail "making r600.h5"
    big="--data $T/r600.h5 --out $RUN --steps 6 --batch 16 --ckpt-every 1"
    HPC_TRAIN_TEST_STOP=0:2 train 2 -q $big 2> /dev/null
    [ $? = 75 ] || fail "in-place edit: the run did not stop at step 2"
    KEEP=1
    off=$("$H5DUMP" -p -H -d /X "$T/r600.h5" | sed -n 's/.*OFFSET \([0-9]*\).*/\1/p')
    [ -n "$off" ] || fail "no offset of /X in r600.h5"
    poke() {   # poke BYTES: the 8 bytes of /X[595, 0]
        printf "$1" | dd of="$T/r600.h5" bs=1 seek=$((off + 595 * 4 * 8)) conv=notrunc 2> /dev/null
    }
    poke '\000\000\000\000\000\000\370\077'   # 1.5
    expect2 1 "--resume on data changed in place away from sampled rows" $big --resume
    grep -q "is not the data the checkpoint was trained on" "$T/stderr" || fail "in-place edit: not named"
    poke '\000\000\000\000\000\000\370\177'   # NaN
    expect2 1 "--resume on data with a NaN in a validation row" $big --resume
    grep -q "r600.h5: validation sample 595 (row 595 of /X, /Y) holds NaN or infinite values" "$T/stderr" ||
        fail "--resume: the NaN is not named"
    expect 1 "--resume --data-changed-ok on data with a NaN" $big --resume --data-changed-ok
    grep -q "validation sample 595 .* holds NaN" "$T/stderr" || fail "--data-changed-ok: the NaN is not named"
    KEEP=
    rm -rf "$RUN"
fi

if ! nvidia-smi -L > /dev/null 2>&1; then
    expect2 2 "--device cuda without a GPU" $ok --device cuda
fi

# --check-sync: one rank's parameters drift after step 5 (test hook); the
# check of step 10 finds it
HPC_TRAIN_TEST_DESYNC=1:5
export HPC_TRAIN_TEST_DESYNC
expect2 1 "ranks drifted apart" $ok --steps 12 --check-sync 5
unset HPC_TRAIN_TEST_DESYNC
grep -q "differ between ranks after step 10" "$T/stderr" || fail "drift: not found at step 10"

# a loss that blows up: stopped at the step, the last good checkpoint kept
KEEP=1
expect2 1 "loss becomes NaN" --data "$T/r.h5" --out "$RUN" --optim sgd --lr 1e30 --steps 20 --batch 16 --ckpt-every 1
KEEP=
grep -q "the loss became .* at step 2;" "$T/stderr" || fail "NaN: not at step 2"
if [ -n "$H5DUMP" ]; then
    "$H5DUMP" -a step "$RUN/checkpoint.h5" | grep -q "(0): 1$" || fail "NaN: the checkpoint is not step 1's"
fi
[ ! -e "$RUN/checkpoint.h5.partial" ] || fail "NaN: a partial checkpoint left"
echo "train_errors: all bad inputs rejected cleanly"
