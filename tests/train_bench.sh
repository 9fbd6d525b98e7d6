#!/bin/sh
# train_bench.sh - hpc-train's benchmark scripts run end to end on a tiny
# problem, so that a change of the summary's wording or of an option
# cannot leave a column empty unnoticed (bench_pipe.sh's validation loss
# once was): every row of apps/train/bench_pipe.sh (S = 2) and
# apps/train/bench_shard.sh (2 ranks) has its rate and its loss, the
# flushed schedules and the shard levels end at dp's loss, the stale rows
# report their optimiser share, and PyTorch's rows on the same model
# (apps/train/torch_bench.py) hold what the model's sizes say: DDP's state
# is hpc-train dp's within 5%, ZeroRedundancyOptimizer's is less, FSDP
# has a rate or the reason this PyTorch cannot run it.  No figure is
# asserted: the rates of a tiny model are noise.  Skips (77) without torch.
. "$top_srcdir/tests/train_lib.sh"
need_torch
export PYTHON MPIEXEC="$MPIEXEC_WRAP -n"

# bytes of "28.0KiB"-style sizes
bytes() {
    echo "$1" | awk '{ v = $1 + 0; u = $1; sub(/^[0-9.]*/, "", u)
        m = u == "KiB" ? 1024 : u == "MiB" ? 1048576 : u == "GiB" ? 1073741824 : 1; printf "%.0f\n", v * m }'
}

LAYERS=11,32,32,32,10 BATCH=64 STEPS=8 LOG=2 TRAJ=40 STAGES=2 REPEAT=2 \
    sh "$top_srcdir/apps/train/bench_pipe.sh" "$top_builddir" "$T/pipe" > "$T/pipe.log" 2>&1 ||
    { cat "$T/pipe.log"; fail "bench_pipe.sh failed"; }
tab=$T/pipe/bench_pipe.txt
for name in dp seq gpipe 1f1b stale stale-ws stale-msnag stale-ws-ga stale-k2; do
    row=$(awk -v n="$name-2" '$1 == n' "$tab")
    [ -n "$row" ] || { cat "$tab"; fail "bench_pipe: no row $name-2"; }
    echo "$row" | awk '{ exit !($3 > 0 && $NF ~ /^[0-9.e+-]+$/ && $NF > 0) }' ||
        { cat "$tab"; fail "bench_pipe: $name-2 has no rate or no validation loss"; }
    case $name in
        stale*) echo "$row" | grep -Eq ' [0-9.]+%/[0-9.]+% ' || { cat "$tab"; fail "bench_pipe: $name-2 has no optimiser share"; } ;;
    esac
done
awk '$1 == "seq-2" { exit !($4 == 1) }' "$tab" || { cat "$tab"; fail "bench_pipe: seq-2 is not 1.00x seq"; }
dp=$(awk '$1 == "dp-2" { print $NF }' "$tab")
for name in seq gpipe 1f1b; do
    awk -v n="$name-2" -v dp="$dp" '$1 == n { d = $NF - dp; d = d < 0 ? -d : d; exit !(d <= 1e-4 * dp) }' "$tab" ||
        { cat "$tab"; fail "bench_pipe: $name-2 does not end at dp's validation loss $dp"; }
done
echo "ok: bench_pipe.sh: 9 rows with rates and losses; the flushed schedules end at dp's loss $dp"

LAYERS=11,32,32,10 BATCH=64 STEPS=8 LOG=2 TRAJ=40 NPS=2 REPEAT=1 \
    sh "$top_srcdir/apps/train/bench_shard.sh" "$top_builddir" "$T/shard" > "$T/shard.log" 2>&1 ||
    { cat "$T/shard.log"; fail "bench_shard.sh failed"; }
tab=$T/shard/bench_shard.txt
dp=$(awk '$1 == "none" && $2 == 2 { print $NF }' "$tab")
[ -n "$dp" ] || { cat "$tab"; fail "bench_shard: no dp row"; }
for level in none optim grads params; do
    awk -v n="$level" -v dp="$dp" '$1 == n && $2 == 2 { found = 1; d = $NF - dp; d = d < 0 ? -d : d
            ok = $3 > 0 && d <= 1e-4 * dp } END { exit !(found && ok) }' "$tab" ||
        { cat "$tab"; fail "bench_shard: --shard $level has no rate or does not end at dp's loss $dp"; }
done
hpc_state=$(bytes "$(awk '$1 == "none" && $2 == 2 { print $5 }' "$tab")")
ddp_state=$(bytes "$(awk '$1 == "torch-ddp" && $2 == 2 && $3 > 0 { print $5 }' "$tab")")
zero_state=$(bytes "$(awk '$1 == "torch-zero1" && $2 == 2 && $3 > 0 { print $5 }' "$tab")")
awk -v h="$hpc_state" -v d="$ddp_state" -v z="$zero_state" 'BEGIN { r = (h - d) / d; r = r < 0 ? -r : r
        exit !(d > 0 && r <= 0.05 && z > 0 && z < d) }' ||
    { cat "$tab"; fail "bench_shard: PyTorch's model state (DDP $ddp_state, ZeRO-1 $zero_state B) against dp's $hpc_state B"; }
grep -Eq '^torch-fsdp +2 +([0-9]+ |unavailable: .+)' "$tab" ||
    { cat "$tab"; fail "bench_shard: the FSDP row has neither a rate nor a reason"; }
echo "ok: bench_shard.sh: every level ends at dp's loss $dp; PyTorch DDP holds $ddp_state B (dp $hpc_state B), ZeRO-1 $zero_state B"
echo "ok: $(grep '^torch-fsdp' "$tab" | cut -c1-100)"
