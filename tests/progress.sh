#!/bin/sh
# progress.sh - what the programs print while they run, with stderr in a
# file as under mpiexec, srun or in a Slurm log (2 ranks, paced by the
# test hooks so that a run lasts a few seconds):
#   - HPC_PROGRESS=1: a line about every second from rank 0 alone;
#     hpc-train's with the step count, epoch, normalised loss, learning
#     rate, samples/s and ETA (the loss and rate those of metrics.csv at
#     that step), hpc-odegen's trajectories and traj/s, hpc-matmul's
#     columns of K, panel and GFLOP/s;
#   - HPC_PROGRESS=0, and the default (60 s) over a short run: none;
#   - HPC_LOG=info HPC_LOG_ALL=1: every rank's log line says its rank once.
. "$top_srcdir/tests/train_lib.sh"
MATMUL=$top_builddir/apps/matmul/hpc-matmul
"$MKDATA" regress "$T/r.h5" 600 || fail "making the data"
targs="--data $T/r.h5 --layers 4,24,24,2 --batch 40 --steps 100 --log-every 1 --eval-every 20"
num='[0-9][0-9.e+-]*'
eta='[0-9][0-9.smhd]*'

# hpc-train
HPC_PROGRESS=1 HPC_TRAIN_TEST_PACE=30 train 2 $targs --out "$T/t1" > "$T/out" 2> "$T/err" || fail "train run"
pat="^train: [0-9]*/100 steps \($num%\), epoch $num/$num, normalised loss $num, lr $num(, val $num)?, ${num}k? samples/s, ${num}s elapsed, ETA $eta\$"
n=$(grep -c -E "$pat" "$T/err")
[ "$n" -ge 1 ] && [ "$n" = "$(grep -c . "$T/err")" ] || { cat "$T/err"; fail "hpc-train: $n progress lines, and others"; }
# each line's loss and learning rate are the step's in metrics.csv (%.4g, %.3g)
grep -E "$pat" "$T/err" | while read -r line; do
    step=$(echo "$line" | sed 's|^train: \([0-9]*\)/.*|\1|')
    loss=$(echo "$line" | sed 's|.*normalised loss \([^,]*\),.*|\1|')
    lr=$(echo "$line" | sed 's|.*, lr \([^,]*\),.*|\1|')
    awk -F, -v s="$step" -v l="$loss" -v r="$lr" 'NR > 1 && $1 == s {
        found = 1; if (sprintf("%.4g", $4) != l || sprintf("%.3g", $3) != r) exit 1 }
        END { exit !found }' "$T/t1/metrics.csv" || fail "hpc-train: '$line' is not step $step of metrics.csv"
done || exit 1
echo "ok: hpc-train, HPC_PROGRESS=1: $n lines with metrics.csv's loss and lr, e.g. $(head -n 1 "$T/err")"
HPC_PROGRESS=0 HPC_TRAIN_TEST_PACE=30 train 2 $targs --out "$T/t0" > "$T/out" 2> "$T/err" || fail "train run"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "hpc-train, HPC_PROGRESS=0: stderr not empty"; }
HPC_TRAIN_TEST_PACE=10 train 2 $targs --out "$T/td" > "$T/out" 2> "$T/err" || fail "train run"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "hpc-train, 1 s in a log: a line before the default 60 s"; }
grep -q '^hpc-train: 100 steps .*; train loss [^,]*, val loss [^ ]* (normalised targets), val MSE [^ ]* (data units);' \
    "$T/out" || { cat "$T/out"; fail "hpc-train: the summary's losses are not labelled"; }
head -n 1 "$T/td/metrics.csv" | grep -q '^step,epoch,lr,train_loss_normalized,val_loss_normalized,val_mse_data,' ||
    fail "metrics.csv: the header does not say the losses are normalised"
echo "ok: hpc-train: no line with HPC_PROGRESS=0 or in a 1 s run; losses labelled in the summary and metrics.csv"

# the summary's "N% hidden" is what metrics.csv's comm_hidden says: the
# communication each step hid (none where it waited for a late rank),
# here one row a step, every step with the same blocking time, so their
# mean; rank 1 is 0.5 s late in step 5 (once: the summary's total went
# below zero with such a step and said 0% while the rows averaged 0.61)
"$ODEGEN" -q -n 200 --nt 21 --out "$T/hid.h5" || fail "making the data"
HPC_TRAIN_TEST_LAG=1:5:500 train 2 --data "$T/hid.h5" --layers 11,64,64,10 --steps 40 --log-every 1 \
    --out "$T/hid" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "train with a late rank"; }
said=$(sed -n 's/.*communication [0-9.]*% of the time, \([0-9]*\)% hidden.*/\1/p' "$T/out")
[ -n "$said" ] || { cat "$T/out"; fail "no '% hidden' in the summary"; }
awk -F, -v said="$said" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "comm_hidden") c = i }
    NR > 1 { s += $c; n++ }
    END { m = 100 * s / n; printf "rows: mean comm_hidden %.1f%%, summary %s%%\n", m, said
          if (n != 40 || m < 5) { print "(rows hid too little to tell)"; exit 1 }
          d = m - said; exit !(d <= 0.5 && d >= -0.5) }' "$T/hid/metrics.csv" ||
    { cat "$T/out"; fail "the summary's hidden share is not metrics.csv's"; }
echo "ok: the summary's hidden share is metrics.csv's rows', with a rank late by 0.5 s in one step"

# a run started by hand at a terminal (script(1) gives the launcher one):
# mpiexec's stderr is the terminal, the ranks' are its pipes, and the line
# is redrawn from the start, not once a minute; the same launcher with its
# stderr in a file (nohup mpiexec ... 2> log) prints none in 3 s
if command -v script > /dev/null 2>&1; then
    hm=$top_builddir/apps/mpiexec/hpc-mpiexec
    HPC_TRAIN_TEST_PACE=30 script -qec "$hm -n 2 $TRAIN $targs --out $T/tty" /dev/null > "$T/tty.out" 2>&1 ||
        { cat -A "$T/tty.out"; fail "hpc-train under hpc-mpiexec at a terminal"; }
    n=$(tr '\r' '\n' < "$T/tty.out" | grep -c -E "^train: [0-9]+/100 steps")
    [ "$n" -ge 2 ] || { cat -A "$T/tty.out"; fail "hpc-train under hpc-mpiexec at a terminal: $n progress redraws in 3 s"; }
    grep -q "$(printf '\r')train: " "$T/tty.out" || fail "the progress line is not redrawn (\\r)"
    HPC_TRAIN_TEST_PACE=30 script -qec "$hm -n 2 $TRAIN $targs --out $T/tty2 2> $T/tty2.err" /dev/null > "$T/tty.out" 2>&1 ||
        fail "hpc-train under hpc-mpiexec, stderr in a file"
    [ ! -s "$T/tty2.err" ] || { cat -A "$T/tty2.err"; fail "progress lines in a file under a launcher started at a terminal"; }
    echo "ok: hpc-train under hpc-mpiexec at a terminal: $n redraws in 3 s; none with the launcher's stderr in a file"
fi

# hpc-odegen
oargs="-n 4000 --nt 2 --chunk 64 --seed 4"
HPC_PROGRESS=1 HPC_ODEGEN_TEST_PACE=60 "$MPIEXEC_WRAP" -n 2 "$ODEGEN" $oargs --out "$T/o1.h5" > "$T/out" 2> "$T/err" ||
    fail "odegen run"
pat="^odegen: [0-9]*/4000 traj \($num%\), ${num}k? traj/s, ${num}s elapsed, ETA $eta\$"
n=$(grep -c -E "$pat" "$T/err")
[ "$n" -ge 1 ] && [ "$n" = "$(grep -c . "$T/err")" ] || { cat "$T/err"; fail "hpc-odegen: $n progress lines, and others"; }
echo "ok: hpc-odegen, HPC_PROGRESS=1: $n lines, e.g. $(head -n 1 "$T/err")"
HPC_PROGRESS=0 HPC_ODEGEN_TEST_PACE=60 "$MPIEXEC_WRAP" -n 2 "$ODEGEN" $oargs --out "$T/o0.h5" > "$T/out" 2> "$T/err" ||
    fail "odegen run"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "hpc-odegen, HPC_PROGRESS=0: stderr not empty"; }

# hpc-odegen's per-rank log line: "rank R:" once
HPC_LOG=info HPC_LOG_ALL=1 "$MPIEXEC_WRAP" -n 2 "$ODEGEN" -q -n 200 --out "$T/log.h5" 2> "$T/err" || fail "odegen HPC_LOG"
for r in 0 1; do
    grep -q -E "^\[ *[0-9.]+s\] rank $r: [0-9]+ trajectories, solver" "$T/err" || { cat "$T/err"; fail "no log line of rank $r"; }
done
grep -q -E 'rank [0-9]+: rank' "$T/err" && { cat "$T/err"; fail "a log line says its rank twice"; }
echo "ok: HPC_LOG=info HPC_LOG_ALL=1: each rank's line says its rank once"

# hpc-matmul: a line a panel, at most one a second
HPC_PROGRESS=1 HPC_MATMUL_TEST_PACE=40 "$MPIEXEC_WRAP" -n 2 "$MATMUL" --gen 40,30,400 --nb 8 > "$T/out" 2> "$T/err" ||
    fail "matmul run"
pat="^matmul: [0-9]*/400 columns of K \($num%\), panel [0-9]* of 50, $num GFLOP/s, ${num}s elapsed, ETA $eta\$"
n=$(grep -c -E "$pat" "$T/err")
[ "$n" -ge 1 ] && [ "$n" = "$(grep -c . "$T/err")" ] || { cat "$T/err"; fail "hpc-matmul: $n progress lines, and others"; }
awk '{ split($2, a, "/"); p = $8 } a[1] != 8 * p { bad = 1 } END { exit bad }' "$T/err" ||
    fail "hpc-matmul: the columns of K are not 8 a panel"
echo "ok: hpc-matmul, HPC_PROGRESS=1: $n lines, e.g. $(head -n 1 "$T/err")"
HPC_PROGRESS=0 HPC_MATMUL_TEST_PACE=40 "$MPIEXEC_WRAP" -n 2 "$MATMUL" --gen 40,30,400 --nb 8 > "$T/out" 2> "$T/err" ||
    fail "matmul run"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "hpc-matmul, HPC_PROGRESS=0: stderr not empty"; }
echo "progress: the programs report progress in logs, and only when asked"
