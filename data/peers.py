#!/usr/bin/env python3
"""peers.py DATA.h5 [options] - the same model trained by scikit-learn's
MLPClassifier/MLPRegressor and by PyTorch on the same split of an /X,/Y
file as hpc-train sees it, for a side-by-side table (docs/train.md, "A
real data set"):

  - the split: the last --val-fraction of the rows test (hpc-train's
    validation rows; datasets.py shuffled them with a seed);
  - the inputs normalised as hpc-train does: (x - mean) / std over the
    training rows, population std, 1 where a feature is constant; for
    regression the targets too, the MSE reported in the targets' units;
  - the same layers (--hidden), activation, Adam with --lr, --batch,
    --epochs, no weight decay, reshuffled every epoch.

Prints one line per peer: "NAME accuracy|mse VALUE samples_per_s RATE".
Needs numpy and h5py; each peer is skipped (a line saying so) without
its package.
"""
import argparse
import sys
import time
import warnings

import h5py
import numpy as np


def split(path, val_fraction):
    with h5py.File(path, "r") as f:
        x, y = f["X"][()].astype(np.float64), f["Y"][()]
        if val_fraction is None:
            val_fraction = float(f.attrs.get("val_fraction", 0.2))
    n = len(x)
    ntest = int(round(val_fraction * n))
    labels = y.dtype.kind in "iu"
    y = y.reshape(-1) if labels else y.reshape(n, -1).astype(np.float64)
    xtr, xte, ytr, yte = x[: n - ntest], x[n - ntest:], y[: n - ntest], y[n - ntest:]
    mu, sd = xtr.mean(0), xtr.std(0)
    sd[~(sd > 0)] = 1
    xtr, xte = (xtr - mu) / sd, (xte - mu) / sd
    ynorm = None
    if not labels:
        ym, ys = ytr.mean(0), ytr.std(0)
        ys[~(ys > 0)] = 1
        ynorm = (ym, ys)
    return xtr, xte, ytr, yte, labels, ynorm


def score(labels, pred, yte):
    return float(np.mean(pred == yte)) if labels else float(np.mean((pred - yte) ** 2))


def sklearn_peer(a, xtr, xte, ytr, yte, labels, ynorm):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    kw = dict(hidden_layer_sizes=tuple(a.hidden), activation=a.act, solver="adam", alpha=0.0, batch_size=a.batch,
              learning_rate_init=a.lr, max_iter=a.epochs, shuffle=True, random_state=a.seed, tol=0.0,
              n_iter_no_change=a.epochs + 1)
    m = MLPClassifier(**kw) if labels else MLPRegressor(**kw)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(xtr, ytr if labels else ((ytr - ynorm[0]) / ynorm[1]).reshape(len(ytr), -1).squeeze(-1))
    secs = time.perf_counter() - t
    pred = m.predict(xte)
    if not labels:
        pred = pred.reshape(len(xte), -1) * ynorm[1] + ynorm[0]
    return score(labels, pred, yte), a.epochs * len(xtr) / secs


def torch_peer(a, xtr, xte, ytr, yte, labels, ynorm):
    import torch
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[a.act]
    sizes = [xtr.shape[1]] + list(a.hidden) + [int(ytr.max()) + 1 if labels else ytr.shape[1]]
    layers = []
    for i in range(len(sizes) - 1):
        layers += [torch.nn.Linear(sizes[i], sizes[i + 1])] + ([act()] if i < len(sizes) - 2 else [])
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    lossf = torch.nn.CrossEntropyLoss() if labels else torch.nn.MSELoss()
    X = torch.from_numpy(xtr).float()
    Y = torch.from_numpy(ytr).long() if labels else torch.from_numpy((ytr - ynorm[0]) / ynorm[1]).float()
    g = torch.Generator().manual_seed(a.seed)
    t = time.perf_counter()
    for _ in range(a.epochs):
        perm = torch.randperm(len(X), generator=g)
        for s in range(0, len(X), a.batch):
            i = perm[s:s + a.batch]
            opt.zero_grad()
            lossf(model(X[i]), Y[i]).backward()
            opt.step()
    secs = time.perf_counter() - t
    with torch.no_grad():
        out = model(torch.from_numpy(xte).float()).numpy()
    pred = out.argmax(1) if labels else out.astype(np.float64) * ynorm[1] + ynorm[0]
    return score(labels, pred, yte), a.epochs * len(xtr) / secs


def main():
    p = argparse.ArgumentParser(prog="peers.py", description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--hidden", type=lambda s: [int(v) for v in s.split(",")], default=[64],
                   help="hidden layer sizes, comma-separated (default 64)")
    p.add_argument("--act", choices=["relu", "tanh"], default="relu")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--val-fraction", type=float, default=None, help="default: the file's val_fraction")
    a = p.parse_args()
    data = split(a.data, a.val_fraction)
    what = "accuracy" if data[4] else "mse"
    for name, peer in (("scikit-learn", sklearn_peer), ("pytorch", torch_peer)):
        try:
            value, rate = peer(a, *data)
        except ImportError as e:
            print(f"{name} skipped: {e}")
            continue
        print(f"{name} {what} {value:.6g} samples_per_s {rate:.0f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
