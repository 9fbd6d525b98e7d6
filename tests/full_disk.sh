#!/bin/sh
# full_disk.sh - a disk that fills up, on a small tmpfs (issue 22 item 2):
#   - hpc-train's checkpoint that does not fit, at 1 and 2 ranks: one
#     line naming what it needs and what is free, exit 1, every rank ends
#     (once: a segfault at exit on 1 rank, a hang on 2), the previous
#     checkpoint intact, no .partial or .lock left, and --resume from it
#     (moved to a disk with room) finishes the run;
#   - metrics.csv when the disk fills mid-run (2 ranks): one line, exit 1,
#     every rank ends (once: a warning per row, then exit 0);
#   - loss.png when the disk is full at the end (2 ranks): one line, exit
#     1, no loss.png (once: a truncated PNG and exit 0);
#   - hpc-odegen when another writer fills the disk mid-run (2 ranks): its
#     output's space was reserved when it was created, so it finishes, equal
#     to a run on a disk with room (once: 4 lines, each rank's and MPICH's
#     abort).
# Needs root (mount -t tmpfs); skips (77) where it cannot mount one.
. "$top_srcdir/tests/train_lib.sh"
[ -n "$H5DUMP" ] || { echo "SKIP: h5dump not found (hdf5-tools)"; exit 77; }
need_h5diff
FULL=$T/full
mkdir -p "$FULL"
mount -t tmpfs -o size=1200k tmpfs "$FULL" 2> /dev/null || { echo "SKIP: cannot mount a tmpfs (not root?)"; exit 77; }
trap 'umount -l "$FULL" 2> /dev/null; rm -rf "$T"' EXIT
"$MKDATA" regress "$T/r.h5" 256 || fail "making r.h5"

# fill: the rest of the tmpfs taken by another writer
fill() { dd if=/dev/zero of="$FULL/hog" bs=4096 > /dev/null 2>&1; true; }
# wait_for COND: up to 60 s
wait_for() { i=0; while ! eval "$1" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; eval "$1"; }
step_of() { "$H5DUMP" -a step "$1" | sed -n 's/^ *(0): //p'; }
# one_line RC CODE WHAT PATTERN
one_line() {
    one_line_error "$1" "$2" "$3" hpc-"${4%%:*}"
    grep -q "${4#*:}" "$T/stderr" || { cat "$T/stderr"; fail "$3: not '${4#*:}'"; }
    echo "ok: $3 -> $(cat "$T/stderr")"
}

# 1. the second checkpoint (840 KiB, with the first still there) does not fit
for np in 1 2; do
    rm -rf "$FULL/run"
    big="--data $T/r.h5 --layers 4,256,256,2 --steps 20 --batch 16 --ckpt-every 5"
    train $np $big --out "$FULL/run" -q > /dev/null 2> "$T/stderr"
    one_line $? 1 "$np ranks: a checkpoint that does not fit" \
        "train:writing the checkpoint: no room for '.*checkpoint.h5.partial': it needs .* MiB, its folder has .* MiB free (No space left on device)"
    [ "$(step_of "$FULL/run/checkpoint.h5")" = 5 ] || fail "$np ranks: the checkpoint is not step 5's"
    [ ! -e "$FULL/run/checkpoint.h5.partial" ] && [ ! -e "$FULL/run/checkpoint.h5.lock" ] ||
        fail "$np ranks: a .partial or .lock left"
done
cp -r "$FULL/run" "$T/moved"
train 2 $big --out "$T/moved" --resume -q 2> "$T/stderr" || { cat "$T/stderr"; fail "--resume of the kept checkpoint"; }
[ "$(step_of "$T/moved/checkpoint.h5")" = 20 ] || fail "the resumed run did not reach step 20"
echo "ok: the kept checkpoint resumes to step 20 on a disk with room"
rm -rf "$FULL/run"

# 2. metrics.csv: the disk fills after a few rows; a page of rows later
# the next row fails
small="--data $T/r.h5 --layers 4,8,2 --batch 16 --log-every 1 --ckpt-every 0"
HPC_TRAIN_TEST_PACE=20 train 2 $small --steps 3000 --out "$FULL/run" -q > /dev/null 2> "$T/stderr" &
pid=$!
wait_for '[ "$(cat "$FULL/run/metrics.csv" 2> /dev/null | wc -l)" -ge 3 ]' || fail "metrics.csv: no rows"
fill
wait $pid
one_line $? 1 "2 ranks: metrics.csv on a full disk" \
    "train:cannot write '.*metrics.csv': No space left on device; stopped after step [0-9]*, .*checkpoint.h5 left as it was"
[ ! -e "$FULL/run/checkpoint.h5" ] || fail "metrics.csv: a checkpoint appeared"
rm -rf "$FULL/run" "$FULL/hog"

# 3. loss.png: the disk fills between the last checkpoint and the plot
if [ -n "$GNUPLOT" ]; then
    HPC_TRAIN_TEST_PLOT_WAIT=$T/go train 2 $small --steps 20 --out "$FULL/run" -q > /dev/null 2> "$T/stderr" &
    pid=$!
    wait_for '[ -e "$FULL/run/checkpoint.h5" ]' || fail "loss.png: no checkpoint"
    fill
    touch "$T/go"
    wait $pid
    one_line $? 1 "2 ranks: loss.png on a full disk" "train:loss.png: "
    [ ! -e "$FULL/run/loss.png" ] || fail "loss.png: a loss.png left"
    ls -a "$FULL/run" | grep -q '^\..*png' && fail "loss.png: a temporary file left"
    [ "$(step_of "$FULL/run/checkpoint.h5")" = 20 ] || fail "loss.png: the checkpoint is not step 20's"
    rm -rf "$FULL/run" "$FULL/hog"
else
    echo "skip: loss.png (no gnuplot)"
fi

# 4. hpc-odegen: another writer fills the disk while it runs
ode="-n 64 --nt 200 --dim 3 --chunk 8"
"$ODEGEN" -q $ode --out "$T/ref.h5" || fail "odegen: the reference run"
HPC_ODEGEN_TEST_PACE=300 "$MPIEXEC_WRAP" -n 2 "$ODEGEN" -q $ode --out "$FULL/ode.h5" 2> "$T/stderr" &
pid=$!
wait_for '[ -e "$FULL/ode.h5.partial" ]' || fail "odegen: no .partial"
fill
wait $pid
rc=$?
[ $rc = 0 ] || { cat "$T/stderr"; fail "odegen with the disk filled mid-run: exit $rc"; }
"$H5DIFF" -q "$T/ref.h5" "$FULL/ode.h5" /y || fail "odegen: /y differs from the run with room"
echo "ok: hpc-odegen finishes on its reserved space while the disk fills, /y equal to a run with room"
rm -f "$FULL/ode.h5" "$FULL/hog"

# 5. hpc-odegen --join on a full disk: one line, exit 1, nothing left
# behind (once: a segfault inside HDF5, exit 139, an empty .partial and a
# .lock left)
for i in 0 1; do "$ODEGEN" -q -n 16 --nt 5 --shard $i/2 --out "$FULL/j.h5" || fail "odegen: shard $i"; done
fill
for np in 1 2; do
    "$MPIEXEC_WRAP" -n $np "$ODEGEN" -q --join 2 --out "$FULL/j.h5" > /dev/null 2> "$T/stderr"
    one_line $? 1 "$np ranks: --join on a full disk" "odegen:no room for '.*j.h5.partial'"
    [ ! -e "$FULL/j.h5" ] && [ ! -e "$FULL/j.h5.partial" ] && [ ! -e "$FULL/j.h5.lock" ] ||
        { ls "$FULL"; fail "--join on a full disk: a file left behind"; }
done
rm -f "$FULL/hog"
"$ODEGEN" -q --join 2 --out "$FULL/j.h5" || fail "--join with room"
echo "full_disk: all checks passed"
