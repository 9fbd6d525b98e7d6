#!/bin/sh
# train_shard.sh - sharded data parallelism (--shard optim|grads|params:
# ZeRO-1, -2, -3) trains as dp does, on an hpc-odegen file with layers
# whose sizes no rank count divides (11-37-29-23-10: every unit padded to
# a multiple of 16 D floats) and a batch of 47 (uneven slices):
#   - every level at 1, 2, 3 and 4 ranks: every one of 60 steps' losses
#     within 1e-5 relative of the 1-rank dp run (several units: small
#     --bucket-mb), the ranks that hold the parameters whole alike
#     (--check-sync); at 4 ranks the optimiser state a rank allocated
#     (the summary) is at most 0.3 of the unsharded one's;
#   - --accum 2 (grads and params sum reduced micro-steps into the shard)
#     and --clip 0.5 (the norm over the shards) against dp's;
#   - a params run at 3 ranks stopped by a signal on one rank resumes bit
#     for bit (model, optimiser state, metrics);
#   - checkpoints are one file whatever wrote them: a run continued in
#     turn by dp, params at 3, a pipeline of 2, grads at 4, hybrid 2 x 2
#     with --shard optim, optim at 2 and dp again (each strategy reads
#     another's and writes for the next) follows the uninterrupted dp
#     run within 1e-5; the sharded checkpoint holds dp's arrays (h5diff
#     within 1e-4) and PyTorch's names.
. "$top_srcdir/tests/train_lib.sh"
need_h5diff
"$ODEGEN" -q -n 60 --nt 21 --out "$T/ode.h5" || fail "making the data"
args="--data $T/ode.h5 --layers 11,37,29,23,10 --steps 60 --log-every 1 --batch 47 --bucket-mb 0.004 -q"

train 1 $args --out "$T/dp" || fail "1 rank"
losses "$T/dp" | awk 'NR == 1 { a = $2 } END { exit !($2 < a / 2) }' || fail "the loss did not halve"
# "optimiser state 2.4 KiB a rank (unsharded 9.4 KiB)" in bytes: "mine whole"
state_bytes() {
    sed -n 's/.*optimiser state \([0-9.]* [KMG]*i*B\) a rank (unsharded \([0-9.]* [KMG]*i*B\)).*/\1 \2/p' "$1" |
        awk '{ for (i = 1; i <= 3; i += 2) { v = $i; u = $(i + 1)
                   v *= u == "KiB" ? 1024 : u == "MiB" ? 1048576 : u == "GiB" ? 1073741824 : 1
                   printf "%d ", v } print "" }'
}
for level in optim grads params; do
    for np in 1 2 3 4; do
        train $np ${args% -q} --shard $level --check-sync 30 --out "$T/$level$np" > "$T/out" ||
            fail "--shard $level on $np ranks"
        close "$T/dp" "$T/$level$np" "--shard $level, $np ranks" 1e-5
    done
    # at 4 ranks each holds a quarter of Adam's state (and the padding)
    set -- $(state_bytes "$T/out")
    [ $# = 2 ] || { cat "$T/out"; fail "--shard $level: no optimiser state in the summary"; }
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && a <= 0.3 * b) }' ||
        fail "--shard $level at 4 ranks: $1 bytes of optimiser state a rank, unsharded $2"
    echo "ok: --shard $level at 4 ranks: optimiser state $1 bytes a rank, unsharded $2"
done
train 1 $args --batch 24 --accum 2 --out "$T/acc" || fail "dp, --accum 2"
for level in grads params; do
    train 3 $args --batch 24 --accum 2 --shard $level --out "$T/acc-$level" || fail "--shard $level --accum 2"
    close "$T/acc" "$T/acc-$level" "--shard $level --accum 2, 3 ranks" 1e-5
done
train 1 $args --clip 0.5 --out "$T/clip" || fail "dp, --clip"
train 4 $args --clip 0.5 --shard params --out "$T/clip-params" || fail "--shard params --clip"
close "$T/clip" "$T/clip-params" "--shard params --clip 0.5, 4 ranks" 1e-5
losses "$T/dp" > "$T/a"
losses "$T/clip" > "$T/b"
! cmp -s "$T/a" "$T/b" || fail "--clip 0.5 clipped nothing: the test is void"

# bitwise resume
ck="$args --shard params --ckpt-every 20"
train 3 $ck --out "$T/ref" || fail "params, uninterrupted"
HPC_TRAIN_TEST_STOP=1:33 train 3 $ck --out "$T/cut" 2> "$T/err"
rc=$?
[ $rc = 75 ] || { cat "$T/err"; fail "params stopped: exit $rc, expected 75"; }
train 3 $ck --out "$T/cut" --resume || fail "params resumed"
same_run "$T/ref" "$T/cut" "--shard params at 3 ranks stopped at 33 on rank 1, resumed"
"$H5DIFF" -q -d 1e-4 "$T/ref/checkpoint.h5" "$T/dp/checkpoint.h5" /model /model || fail "params' /model is not dp's"
"$H5DIFF" -q -d 1e-4 "$T/ref/checkpoint.h5" "$T/dp/checkpoint.h5" /optim /optim || fail "params' /optim is not dp's"
echo "ok: the sharded checkpoint holds dp's arrays (within 1e-4)"

# one checkpoint, every strategy in turn
chain="--data $T/ode.h5 --layers 11,37,29,23,10 --log-every 1 --batch 47 --bucket-mb 0.004 -q --out $T/chain"
train 1 $chain --steps 10 || fail "chain: dp"
train 3 $chain --steps 20 --resume --shard params || fail "chain: params at 3 reads dp's"
train 2 $chain --steps 30 --resume --parallel pipe --micro 3 || fail "chain: a pipeline reads params'"
train 4 $chain --steps 40 --resume --shard grads || fail "chain: grads at 4 reads the pipeline's"
train 4 $chain --steps 50 --resume --parallel hybrid --stages 2 --shard optim || fail "chain: hybrid optim reads grads'"
train 2 $chain --steps 55 --resume --shard optim || fail "chain: optim at 2 reads hybrid's"
train 1 $chain --steps 60 --resume || fail "chain: dp reads optim's"
close "$T/dp" "$T/chain" "dp, params, pipe, grads, hybrid optim, optim, dp in turn" 1e-5
echo "train_shard: sharded data parallelism trains as dp does"
