#!/bin/sh
# train_memory.sh - --mem-budget: what a rank will hold is checked
# before anything is allocated, from its strategy's own formula.  A
# model whose Adam state (and gradients and parameters) does not fit
# 16 MiB a rank (11-512x6-10, 21 MB) is refused with dp at 4 ranks, one
# line naming the need, exit 1, no run folder; --shard params at 4 ranks
# holds a quarter of it plus two gathered and two staged layers and
# trains within the budget, its losses those of dp without a budget
# (within 1e-5); the summary reports the model state.
. "$top_srcdir/tests/train_lib.sh"
"$ODEGEN" -q -n 40 --nt 11 --out "$T/ode.h5" || fail "making ode.h5"

# the budget
args="--data $T/ode.h5 --layers 11,512,512,512,512,512,512,10 --steps 8 --log-every 1 --batch 64 -q"
train 4 $args --mem-budget 16M --out "$T/dp" > "$T/stdout" 2> "$T/stderr"
one_line_error $? 1 "dp over --mem-budget 16M" hpc-train
grep -q "^hpc-train: --mem-budget 16.0 MiB: rank [0-3] would hold [0-9.]* MiB (model state [0-9.]* MiB" "$T/stderr" ||
    { cat "$T/stderr"; fail "the budget's line does not name the need"; }
[ ! -e "$T/dp" ] || fail "dp over the budget: the run folder was made"
echo "ok: dp over the budget -> $(cat "$T/stderr")"
dp=$(sed -n 's/.*(model state \([0-9.]*\) MiB.*/\1/p' "$T/stderr")
# without -q: the summary
train 4 ${args% -q} --mem-budget 16M --shard params --out "$T/params" > "$T/out" || fail "--shard params within 16M"
train 1 $args --out "$T/ref" || fail "dp without a budget"
close "$T/ref" "$T/params" "--shard params at 4 ranks within --mem-budget 16M" 1e-5
params=$(sed -n 's/.*model+grads+optimizer \([0-9.]*\) MiB.*/\1/p' "$T/out")
[ -n "$dp" ] && [ -n "$params" ] || { cat "$T/stderr" "$T/out"; fail "no model state in the line or the summary"; }
awk -v p="$params" -v d="$dp" 'BEGIN { exit !(p < 16 && p <= 0.5 * d) }' ||
    fail "--shard params holds $params MiB of model state a rank, dp $dp MiB: not within the budget or not half"
echo "ok: model state a rank: --shard params $params MiB, dp $dp MiB;" \
     "$(sed -n 's/.*\(peak memory .*\)); .*/\1)/p' "$T/out")"
echo "train_memory: --mem-budget is checked before memory is taken"
