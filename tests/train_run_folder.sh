#!/bin/sh
# train_run_folder.sh - hpc-train's run folder is the run's own (issue 22
# item 4):
#   - a second run on an --out that a live run holds is refused at once,
#     one line naming the holder, exit 1 (at 1 and 2 ranks), and the first
#     run's metrics.csv and checkpoint stay its own (once: both exited 0,
#     with mixed rows and one run's checkpoint);
#   - symbolic links left under the folder's names (metrics.csv, loss.png,
#     checkpoint.h5, checkpoint.h5.partial, checkpoint.h5.lock, .lock) are
#     replaced by the run's files and their targets are never written
#     (once: a metrics.csv link overwrote its target).
. "$top_srcdir/tests/train_lib.sh"
RUN=$T/run
"$MKDATA" regress "$T/r.h5" 256 || fail "making r.h5"
args="--data $T/r.h5 --layers 4,8,2 --batch 16 --log-every 1"

# 1. two runs at once
HPC_TRAIN_TEST_PACE=80 train 2 $args --steps 100 --out "$RUN" -q > /dev/null 2> "$T/first" &
pid=$!
i=0
while [ "$(cat "$RUN/metrics.csv" 2> /dev/null | wc -l)" -lt 3 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
for np in 1 2; do
    train $np $args --steps 5 --seed 9 --force --out "$RUN" > "$T/stdout" 2> "$T/stderr"
    one_line_error $? 1 "$np ranks: a second run on a busy folder" hpc-train
    grep -q "run folder '.*run' is in use by another run (pid and host: [0-9]* .*)" "$T/stderr" ||
        { cat "$T/stderr"; fail "$np ranks: the holder is not named"; }
    echo "ok: $np ranks: a second run -> $(cat "$T/stderr")"
done
kill -0 $pid 2> /dev/null || fail "the first run ended before the second was tried (too fast?)"
wait $pid || { cat "$T/first"; fail "the first run failed"; }
# the first run's rows, steps 1..100 once each in order, and its checkpoint
awk -F, 'NR > 1 { if ($1 != NR - 1) { print "row " NR ": step " $1; exit 1 } } END { exit NR != 101 }' \
    "$RUN/metrics.csv" || fail "metrics.csv is not the first run's 100 rows"
if [ -n "$H5DUMP" ]; then
    "$H5DUMP" -a step "$RUN/checkpoint.h5" | grep -q "(0): 100$" || fail "the checkpoint is not the first run's"
    "$H5DUMP" -a seed "$RUN/checkpoint.h5" | grep -q "(0): 0$" || fail "the checkpoint's seed is not the first run's"
fi
[ ! -e "$RUN/.lock" ] || fail "the run folder's lock file was left"
echo "ok: the first run's metrics.csv (100 rows) and checkpoint are its own"

# 2. links under the folder's names, at a fresh start and at --force
rm -rf "$RUN"
mkdir -p "$RUN"
for f in metrics.csv loss.png checkpoint.h5.partial checkpoint.h5.lock .lock; do
    echo "precious $f" > "$T/victim-$f"
    ln -s "$T/victim-$f" "$RUN/$f"
done
train 2 $args --steps 12 --out "$RUN" -q 2> "$T/stderr" || { cat "$T/stderr"; fail "a run over links"; }
echo "precious checkpoint.h5" > "$T/victim-checkpoint.h5"
rm -f "$RUN/metrics.csv"
ln -s "$T/victim-metrics.csv" "$RUN/metrics.csv"
ln -sf "$T/victim-checkpoint.h5" "$RUN/checkpoint.h5"
train 1 $args --steps 12 --out "$RUN" --force -q 2> "$T/stderr" || { cat "$T/stderr"; fail "--force over links"; }
for f in metrics.csv loss.png checkpoint.h5.partial checkpoint.h5.lock .lock checkpoint.h5; do
    [ "$(cat "$T/victim-$f")" = "precious $f" ] || fail "the target of a $f link was written"
done
for f in metrics.csv checkpoint.h5; do
    [ -f "$RUN/$f" ] && [ ! -L "$RUN/$f" ] || fail "$f is not the run's own file"
done
[ -z "$GNUPLOT" ] || { [ -f "$RUN/loss.png" ] && [ ! -L "$RUN/loss.png" ]; } || fail "loss.png is not the run's own file"
[ "$(wc -l < "$RUN/metrics.csv")" = 13 ] || fail "metrics.csv does not hold the 12 rows"
echo "ok: links under the run folder's names replaced, their targets untouched"
echo "train_run_folder: all checks passed"
