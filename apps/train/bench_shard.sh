#!/bin/sh
# bench_shard.sh - data parallelism and each level of --shard on the same
# model and data, measured in one run on the same machine.
#
#   apps/train/bench_shard.sh [BUILD_DIR [OUT_DIR]]
#
# On the flow-map pairs of an hpc-odegen file (TRAJ trajectories, held in
# memory with --preload), LAYERS (default 11,1024,1024,1024,1024,1024,10:
# the parameters dominate), tanh, MSE, Adam, global batch BATCH (default
# 1024), STEPS steps (default 200), --bucket-mb BUCKET (default 4: several
# units, so the reductions overlap backward), one BLAS thread per rank, at
# NPS ranks (default "2 4") it runs dp, --shard optim, --shard grads and
# --shard params, interleaved over REPEAT rounds (default 3, so load
# changes hit all alike), and prints a table: samples/s (the median over
# the rounds of the median over windows of LOG steps, the first left
# out), each against dp's at the same ranks, the model state a rank holds
# (parameters, gradients, optimiser state and the strategy's buffers: the
# summary's figure, the formula of docs/train.md), the optimiser state a
# rank allocated, the share of communication hidden, and the validation
# loss at the end (the same for all within float32 rounding).  Beside
# them, PyTorch on the same model, data, batch and ranks
# (apps/train/torch_bench.py, gloo, one thread a process): DDP, DDP with
# ZeroRedundancyOptimizer (ZeRO-1, as --shard optim) and FSDP (ZeRO-3,
# as --shard params) where the installed PyTorch runs it (Debian 12's
# 1.13 on Python 3.11 fails to import it: the row says why), with the
# model state rank 0 holds.  OUT_DIR (default .) receives
# bench_shard.txt.  Environment: LAYERS, BATCH, STEPS, BUCKET, LOG
# (default 20), TRAJ (default 1000), NPS, REPEAT, TORCH (default 1; 0
# leaves PyTorch out), PYTHON (default /usr/bin/python3), MPIEXEC
# (default: the launcher configure chose, tests/mpiexec-wrap), TMPDIR
# (scratch, deleted).
set -e
build=${1:-.}
out=${2:-.}
here=$(dirname "$0")
. "$here/bench_lib.sh"
LAYERS=${LAYERS:-11,1024,1024,1024,1024,1024,10}
BATCH=${BATCH:-1024}
STEPS=${STEPS:-200}
BUCKET=${BUCKET:-4}
LOG=${LOG:-20}
TRAJ=${TRAJ:-1000}
NPS=${NPS:-2 4}
REPEAT=${REPEAT:-3}
TORCH=${TORCH:-1}
mkdir -p "$out"

"$odegen" -q -n "$TRAJ" --out "$dir/ode.h5"
args="--data $dir/ode.h5 --layers $LAYERS --act tanh --loss mse --optim adam --lr 1e-3 --batch $BATCH
      --steps $STEPS --preload --log-every $LOG --ckpt-every 0 --bucket-mb $BUCKET --force"
levels="none optim grads params"

# one NAME NP LEVEL: one run; its rate appended to NAME.rates, its summary kept
one() {
    $MPIEXEC "$2" "$prog" $args --shard "$3" --out "$dir/$1" > "$dir/$1.out"
    rates "$dir/$1/metrics.csv" | median >> "$dir/$1.rates"
}

# torch NAME NP MODE: PyTorch's run of the same problem; its rate appended
# to NAME.rates, its state bytes (or why it cannot run) kept in NAME.out
torch() {
    "$PYTHON" "$here/torch_bench.py" "$dir/ode.h5" "$STEPS" "$2" --layers "$LAYERS" --batch "$BATCH" \
        --window "$LOG" --mode "$3" --scratch "$dir" > "$dir/$1.out" 2> "$dir/$1.err" || true
    case $(cat "$dir/$1.out") in
        unavailable:*) ;;
        [0-9]*) cut -d' ' -f1 "$dir/$1.out" >> "$dir/$1.rates" ;;
        *) echo "unavailable: it failed: $(tail -n 1 "$dir/$1.err")" > "$dir/$1.out" ;;
    esac
}
torch_modes=
[ "$TORCH" = 1 ] && torch_modes="ddp zero1 fsdp"

{
    echo "bench_shard.sh: $LAYERS tanh, MSE, Adam, batch $BATCH, $STEPS steps, --bucket-mb $BUCKET," \
         "1 BLAS thread a rank, $REPEAT rounds; $(getconf _NPROCESSORS_ONLN) cores, load" \
         "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf "%-11s %2s %12s %7s %12s %12s %7s %s\n" shard np samples/s "x dp" "model state" "optim state" \
        hidden "val loss"
} | tee "$out/bench_shard.txt"
for np in $NPS; do
    for r in $(seq "$REPEAT"); do
        for level in $levels; do one "$level-$np" "$np" "$level"; done
        for mode in $torch_modes; do torch "torch-$mode-$np" "$np" "$mode"; done
    done
    dp=$(median < "$dir/none-$np.rates")
    for level in $levels; do
        name=$level-$np
        line=$(cat "$dir/$name.out")
        rate=$(median < "$dir/$name.rates")
        state=$(echo "$line" | sed -n 's/.*model+grads+optimizer \([0-9.]* [KMG]*i*B\).*/\1/p' | tr -d ' ')
        opt=$(echo "$line" | sed -n 's/.*optimiser state \([0-9.]* [KMG]*i*B\) a rank.*/\1/p' | tr -d ' ')
        hidden=$(echo "$line" | sed -n 's/.*of the time, \([0-9]*%\) hidden.*/\1/p')
        val=$(echo "$line" | sed -n 's/.*val loss \([0-9.e+-]*\) .*/\1/p')
        printf "%-11s %2s %12.0f %7.2f %12s %12s %7s %s\n" "$level" "$np" "${rate:-0}" \
            "$(echo "${rate:-0} ${dp:-1}" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')" "${state:--}" \
            "${opt:-(whole)}" "${hidden:--}" "${val:--}" | tee -a "$out/bench_shard.txt"
    done
    for mode in $torch_modes; do
        name=torch-$mode-$np
        case $(cat "$dir/$name.out") in
        unavailable:*)
            printf "%-11s %2s %s\n" "torch-$mode" "$np" "$(cat "$dir/$name.out")" | tee -a "$out/bench_shard.txt" ;;
        *)
            rate=$(median < "$dir/$name.rates")
            state=$(cut -d' ' -f2 "$dir/$name.out" | awk '{ b = $1; u = "B"
                if (b >= 1024) { b /= 1024; u = "KiB" } if (b >= 1024) { b /= 1024; u = "MiB" }
                if (b >= 1024) { b /= 1024; u = "GiB" } printf "%.1f%s", b, u }')
            printf "%-11s %2s %12.0f %7.2f %12s %12s %7s %s\n" "torch-$mode" "$np" "$rate" \
                "$(echo "$rate ${dp:-1}" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')" "$state" - - - |
                tee -a "$out/bench_shard.txt" ;;
        esac
    done
done
echo "bench_shard.sh: $out/bench_shard.txt"
