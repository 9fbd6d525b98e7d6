#!/bin/sh
# train_cuda.sh - --device cuda against the CPU: the losses of 100 steps
# within 1e-4 relative, on 1 rank and (gradients reduced through libhpc's
# NCCL path, or its own device algorithms on one GPU, overlapping
# backward) on 2, with each --shard level on 2, and as a 2-stage 1f1b
# pipeline;
# checkpoints of either load in the other's layout.  Skips (77) without a
# GPU (nvidia-smi) or without CUDA in this build, fails where there is one
# and --device cuda does not work.
. "$top_srcdir/tests/train_lib.sh"
"$ODEGEN" -q -n 40 --nt 11 --out "$T/ode.h5" || fail "making the data"
args="--data $T/ode.h5 --layers 11,64,64,10 --batch 32 --steps 100 --log-every 1 --bucket-mb 0.01 -q"
# skip only where there is no GPU (nvidia-smi lists none) or no CUDA in
# this build; with both, a --device cuda that fails is a failure
[ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 1 ] || { echo "SKIP: no GPU (nvidia-smi -L lists none)"; exit 77; }
[ "${HAVE_CUDA_BUILD:-no}" = yes ] || { echo "SKIP: built without CUDA"; exit 77; }
"$TRAIN" $args --device cuda --out "$T/probe" --steps 1 2> "$T/err" ||
    { cat "$T/err"; fail "--device cuda failed on a machine with a GPU"; }
train 1 $args --out "$T/cpu" || fail "cpu"
train 1 $args --device cuda --out "$T/gpu" || fail "cuda"
close "$T/cpu" "$T/gpu" "1 rank, cuda against cpu" 1e-4
# 2 ranks: through NCCL where each has a GPU of its own; on one GPU NCCL
# refuses the shared device and auto falls back to hpckit's own device
# algorithms, saying so once (what a user with one GPU meets first)
train 2 $args --device cuda --out "$T/gpu2" 2> "$T/err2" || { cat "$T/err2"; fail "cuda, 2 ranks"; }
close "$T/cpu" "$T/gpu2" "2 ranks, cuda against cpu" 1e-4
if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
    grep -q "auto: nccl" "$T/err2" && fail "2 ranks on 2 GPUs did not use NCCL: $(cat "$T/err2")"
    echo "ok: 2 ranks, 2 GPUs: NCCL"
else
    grep -q "auto: nccl: ranks 0 and 1 share GPU .*own algorithms" "$T/err2" ||
        fail "2 ranks on one GPU: no line saying NCCL was refused and what ran instead: $(cat "$T/err2")"
    echo "ok: 2 ranks, one GPU: hpckit's own device algorithms (NCCL refused the shared GPU, said once)"
fi
# the sharded levels on device buffers, against the CPU (issue 34.11)
for level in optim grads params; do
    train 2 $args --device cuda --shard $level --out "$T/gpu-$level" 2> "$T/err" ||
        { cat "$T/err"; fail "cuda, --shard $level, 2 ranks"; }
    close "$T/cpu" "$T/gpu-$level" "--shard $level, 2 ranks, cuda against cpu" 1e-4
done
# a pipeline of 2 stages on device buffers (both ranks on the GPU they
# are bound to; messages staged through the host)
train 2 $args --device cuda --parallel pipe --micro 4 --out "$T/gpipe" || fail "cuda, 2-stage 1f1b"
close "$T/cpu" "$T/gpipe" "2-stage 1f1b pipeline, cuda against cpu" 1e-4
# a GPU run's checkpoint resumes on the CPU (same layout)
HPC_TRAIN_TEST_STOP=0:50 train 1 $args --device cuda --out "$T/mix" 2> /dev/null
[ $? = 75 ] || fail "stopping the GPU run"
train 1 $args --out "$T/mix" --resume || fail "resuming a GPU checkpoint on the CPU"
close "$T/cpu" "$T/mix" "50 steps on the GPU, 50 on the CPU" 1e-4
echo "train_cuda: the GPU trains as the CPU does"
