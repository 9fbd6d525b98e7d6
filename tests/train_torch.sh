#!/bin/sh
# train_torch.sh - hpc-train against PyTorch (Debian's python3-torch),
# step by step: every optimiser (SGD with momentum, Nesterov and weight
# decay; Adam; AdamW), schedule (warm-up, cosine, both), clipping,
# accumulation, activation (tanh, relu, gelu) and loss (MSE,
# cross-entropy), and hpc-odegen's flow-map pairs with normalisation
# (target next and delta, trajectories that failed skipped): the loss and
# learning rate of each of 25 steps and the final parameters, from the
# same initial weights (loaded with the five lines of docs/train.md).
# See tests/train_torch.py.  Skips (77) without torch.
. "$top_srcdir/tests/train_lib.sh"
need_torch
"$MKDATA" regress "$T/r.h5" 64 || fail "making r.h5"
"$MKDATA" classes "$T/c.h5" 64 || fail "making c.h5"
# lorenz with an attempt limit that 4 of 12 trajectories exceed
"$ODEGEN" -q -s lorenz -n 12 --nt 6 --t1 2 --max-steps 27 --out "$T/ode.h5" || fail "making ode.h5"
OMP_NUM_THREADS=1 "$PYTHON" "$top_srcdir/tests/train_torch.py" "$TRAIN" "$T" "$top_srcdir/docs/train.md" \
    "$T/r.h5" "$T/c.h5" "$T/ode.h5" || fail "hpc-train and PyTorch differ"
echo "train_torch: hpc-train trains as PyTorch does"
