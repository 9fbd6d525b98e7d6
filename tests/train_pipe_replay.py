"""train_pipe_replay.py - a serial replay of the stale pipeline's gradients.

Usage: train_pipe_replay.py DUMPDIR SIZES BATCH MODE

DUMPDIR holds stage<s>.bin from hpc-train's test hook
HPC_TRAIN_TEST_PIPE_DUMP (see apps/train/pipe.c: per backward, the weights
the micro-batch's forward used, those its backward used, the gradient the
stage computed, and the rows).  SIZES is --layers, BATCH the global batch
(the loss is MSE over BATCH x outputs, tanh between layers).  For every
micro-batch the whole network is rebuilt from the weights each stage's
forward used and its gradient recomputed in float64 with numpy; MODE:
  stash    every stage's gradient equals the replay's (within 1e-4 of its
           largest element) and the backward used the forward's weights;
  nostash  the check is sensitive: some stage's backward used other
           weights than its forward, and its gradient differs from the
           replay's.
"""
import os
import sys

import numpy as np


def read_stage(path, sizes, first, last):
    raw = open(path, "rb").read()
    pos, recs = 0, {}
    while pos < len(raw):
        step, mb, lo, hi, rows = np.frombuffer(raw, np.int32, 5, pos)
        pos += 20

        def layers():
            nonlocal pos
            out = []
            for l in range(lo, hi):
                nw, nb = sizes[l] * sizes[l + 1], sizes[l + 1]
                w = np.frombuffer(raw, np.float32, nw, pos).reshape(sizes[l + 1], sizes[l])
                b = np.frombuffer(raw, np.float32, nb, pos + 4 * nw)
                pos += 4 * (nw + nb)
                out.append((w.astype(np.float64), b.astype(np.float64)))
            return out

        fwd, bwd, grad = layers(), layers(), layers()
        x = y = None
        if first:
            x = np.frombuffer(raw, np.float32, rows * sizes[0], pos).reshape(rows, sizes[0]).astype(np.float64)
            pos += 4 * rows * sizes[0]
        if last:
            y = np.frombuffer(raw, np.float32, rows * sizes[-1], pos).reshape(rows, sizes[-1]).astype(np.float64)
            pos += 4 * rows * sizes[-1]
        recs[(int(step), int(mb))] = dict(lo=lo, hi=hi, fwd=fwd, bwd=bwd, grad=grad, x=x, y=y)
    return recs


def replay(weights, x, y, scale):
    """gradients of sum((net(x) - y)^2) * scale for each layer"""
    acts = [x]
    for l, (w, b) in enumerate(weights):
        z = acts[-1] @ w.T + b
        acts.append(z if l == len(weights) - 1 else np.tanh(z))
    d = 2 * (acts[-1] - y) * scale
    grads = [None] * len(weights)
    for l in range(len(weights) - 1, -1, -1):
        if l < len(weights) - 1:
            d = d * (1 - acts[l + 1] ** 2)
        grads[l] = (d.T @ acts[l], d.sum(axis=0))
        d = d @ weights[l][0]
    return grads


def main():
    d, sizes, batch, mode = sys.argv[1], [int(v) for v in sys.argv[2].split(",")], int(sys.argv[3]), sys.argv[4]
    S = len([f for f in os.listdir(d) if f.startswith("stage")])
    stages = [read_stage(os.path.join(d, f"stage{s}.bin"), sizes, s == 0, s == S - 1) for s in range(S)]
    scale = 1.0 / (batch * sizes[-1])
    worst, stale_seen, differs, n = 0.0, False, False, 0
    for key in sorted(stages[0]):
        recs = [st[key] for st in stages]
        weights = [wb for r in recs for wb in r["fwd"]]
        grads = replay(weights, recs[0]["x"], recs[-1]["y"], scale)
        for r in recs:
            used_other = any(not np.array_equal(f[0], b[0]) for f, b in zip(r["fwd"], r["bwd"]))
            stale_seen |= used_other
            for l, (gw, gb) in zip(range(r["lo"], r["hi"]), r["grad"]):
                ref = grads[l]
                top = max(np.abs(ref[0]).max(), np.abs(ref[1]).max(), 1e-30)
                err = max(np.abs(gw - ref[0]).max(), np.abs(gb - ref[1]).max()) / top
                if mode == "stash":
                    if used_other:
                        sys.exit(f"step {key[0]} micro-batch {key[1]}: the backward of layers {r['lo']}-{r['hi']} "
                                 "did not use the forward's weights")
                    worst = max(worst, err)
                elif used_other and err > 1e-3:
                    differs = True
        n += 1
    if mode == "stash":
        print(f"ok: {n} micro-batches on {S} stages: every applied gradient is the gradient of the weights its "
              f"forward used, within {worst:.2g} of its largest element")
        return 0 if worst <= 1e-4 and n > 0 else 1
    print(f"ok: without stashing the backward saw other weights: {stale_seen}, its gradient differed from the "
          f"replay: {differs} ({n} micro-batches)")
    return 0 if stale_seen and differs else 1


if __name__ == "__main__":
    sys.exit(main())
