"""train_torch.py - hpc-train against PyTorch, step by step (tests/train_torch.sh).

Each case trains the same network from the same initial weights on the
same full batch with hpc-train and with torch.nn / torch.optim /
torch.optim.lr_scheduler, and compares the loss and the learning rate of
every step and the final parameters.  The initial weights come from
hpc-train's checkpoint after --epochs 0, loaded with the five lines of
docs/train.md (so they are tested too).  A full batch, so the shuffle
order only reorders a sum.

usage: train_torch.py HPC_TRAIN TMPDIR DOCS_TRAIN_MD REGRESS.h5 CLASSES.h5 ODE.h5
"""
import re
import subprocess
import sys

import warnings

import h5py
import numpy as np
import torch

# SequentialLR steps its schedulers with an epoch argument itself
warnings.filterwarnings("ignore", message="The epoch parameter")

train, tmp, doc, regress, classes, ode = sys.argv[1:7]
torch.set_num_threads(1)
torch.manual_seed(0)
STEPS = 25
failures = 0


def snippet(path):
    """The loading lines of docs/train.md, pointed at path."""
    text = open(doc).read()
    block = re.search(r"```python\n(import h5py, torch\n.*?)```", text, re.S).group(1)
    assert block.count("\n") == 5, "the docs' loader is not five lines"
    return block.replace("run/checkpoint.h5", path)


def load(path):
    env = {}
    exec(snippet(path), env)
    return env["model"]


def hpc(args, out):
    subprocess.run([train, "-q", "--force", "--out", out] + args, check=True)
    m = np.genfromtxt(f"{out}/metrics.csv", delimiter=",", names=True)
    return np.atleast_1d(m["train_loss_normalized"]), np.atleast_1d(m["lr"])


def data_xy(path):
    with h5py.File(path, "r") as f:
        x = torch.tensor(f["X"][()], dtype=torch.float32)
        y = f["Y"][()]
    y = torch.tensor(y, dtype=torch.long) if y.dtype.kind in "iu" else torch.tensor(y, dtype=torch.float32)
    return x, y


def data_ode(path, delta):
    """hpc-odegen's flow-map pairs as docs/train.md states them, normalised
    with the training set's mean and population std"""
    with h5py.File(path, "r") as f:
        y, t, st = f["y"][()], f["t"][()], f["stats/status"][()]
    y = y[st == 0]
    n, nt, d = y.shape
    x = np.concatenate([y[:, :-1, :], np.broadcast_to(t[:-1, None], (n, nt - 1, 1))], axis=2).reshape(-1, d + 1)
    tgt = (y[:, 1:, :] - y[:, :-1, :] if delta else y[:, 1:, :]).reshape(-1, d)
    norm = lambda a: (a - a.mean(axis=0)) / a.std(axis=0)
    return torch.tensor(norm(x), dtype=torch.float32), torch.tensor(norm(tgt), dtype=torch.float32)


def torch_run(model, x, y, case):
    o = case["opt"]
    params = list(model.parameters())
    if o["kind"] == "sgd":
        opt = torch.optim.SGD(params, lr=o["lr"], momentum=o.get("momentum", 0), nesterov=o.get("nesterov", False),
                              weight_decay=o.get("wd", 0))
    else:
        cls = torch.optim.AdamW if o["kind"] == "adamw" else torch.optim.Adam
        opt = cls(params, lr=o["lr"], betas=o.get("betas", (0.9, 0.999)), eps=o.get("eps", 1e-8),
                  weight_decay=o.get("wd", 0.01 if o["kind"] == "adamw" else 0))
    scheds, w = [], o.get("warmup", 0)
    if w:
        scheds.append(torch.optim.lr_scheduler.LinearLR(opt, start_factor=1 / w, end_factor=1, total_iters=w - 1))
    if o.get("cosine"):
        scheds.append(torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS - w, eta_min=o.get("min_lr", 0)))
    sched = None
    if len(scheds) == 2:
        sched = torch.optim.lr_scheduler.SequentialLR(opt, scheds, milestones=[w])
    elif scheds:
        sched = scheds[0]
    lossf = torch.nn.CrossEntropyLoss() if case.get("ce") else torch.nn.MSELoss()
    losses, lrs = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        if o.get("clip"):
            torch.nn.utils.clip_grad_norm_(params, o["clip"])
        lrs.append(opt.param_groups[0]["lr"])
        losses.append(loss.item())
        opt.step()
        if sched:
            sched.step()
    return np.array(losses), np.array(lrs)


def check(name, args, data, case):
    global failures
    out0, out = f"{tmp}/{len(name)}-init", f"{tmp}/run"
    hpc(args + ["--epochs", "0"], out0)
    model = load(f"{out0}/checkpoint.h5")
    hl, hlr = hpc(args + ["--steps", str(STEPS), "--log-every", "1"], out)
    tl, tlr = torch_run(model, data[0], data[1], case)
    with h5py.File(f"{out}/checkpoint.h5", "r") as f:
        dp = max(float(np.max(np.abs(f[f"model/{k.replace('.', '/')}"][()] - v.detach().numpy())))
                 for k, v in model.state_dict().items())
    dl = float(np.max(np.abs(hl - tl) / np.abs(tl)))
    dlr = float(np.max(np.abs(hlr - tlr) / tlr))
    # measured: losses within 3e-7, parameters within 5e-7 (float32 orders)
    ok = len(hl) == STEPS and dl < 1e-5 and dlr < 1e-6 and dp < 1e-5 and tl[-1] < tl[0]
    failures += not ok
    print(f"{'ok' if ok else 'FAIL'}: {name}: {STEPS} losses within {dl:.2g} relative "
          f"({tl[0]:.4g} -> {tl[-1]:.4g}), learning rates within {dlr:.2g}, parameters within {dp:.2g}")


base = ["--layers", "4,16,16,2", "--batch", "64", "--val-fraction", "0", "--no-normalize", "--seed", "3"]
reg = data_xy(regress)
cases = [
    ("SGD", ["--optim", "sgd", "--lr", "0.1"], {"kind": "sgd", "lr": 0.1}),
    ("SGD, momentum, weight decay", ["--optim", "sgd", "--lr", "0.05", "--momentum", "0.9", "--weight-decay", "1e-3"],
     {"kind": "sgd", "lr": 0.05, "momentum": 0.9, "wd": 1e-3}),
    ("SGD, Nesterov", ["--optim", "sgd", "--lr", "0.05", "--momentum", "0.8", "--nesterov"],
     {"kind": "sgd", "lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("SGD, linear warm-up", ["--optim", "sgd", "--lr", "0.1", "--warmup", "4"], {"kind": "sgd", "lr": 0.1, "warmup": 4}),
    ("Adam", ["--optim", "adam", "--lr", "0.01"], {"kind": "adam", "lr": 0.01}),
    ("Adam, weight decay, betas, eps",
     ["--optim", "adam", "--lr", "0.01", "--weight-decay", "0.05", "--betas", "0.8,0.99", "--eps", "1e-6"],
     {"kind": "adam", "lr": 0.01, "wd": 0.05, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("AdamW", ["--optim", "adamw", "--lr", "0.01", "--weight-decay", "0.1"], {"kind": "adamw", "lr": 0.01, "wd": 0.1}),
    ("Adam, warm-up + cosine, clipping",
     ["--optim", "adam", "--lr", "0.02", "--warmup", "5", "--schedule", "cosine", "--min-lr", "1e-3", "--clip", "0.5"],
     {"kind": "adam", "lr": 0.02, "warmup": 5, "cosine": True, "min_lr": 1e-3, "clip": 0.5}),
    ("SGD, cosine", ["--optim", "sgd", "--lr", "0.1", "--schedule", "cosine"], {"kind": "sgd", "lr": 0.1, "cosine": True}),
    ("--accum 2 x batch 32 (the full batch)", ["--optim", "sgd", "--lr", "0.1", "--batch", "32", "--accum", "2"],
     {"kind": "sgd", "lr": 0.1}),
]
for name, args, opt in cases:
    check(name, ["--data", regress] + base + args, reg, {"opt": opt})
for act, mod in (("relu", torch.nn.ReLU), ("gelu", torch.nn.GELU)):
    check(f"{act}, Adam", ["--data", regress] + base + ["--act", act, "--optim", "adam", "--lr", "0.01"], reg,
          {"opt": {"kind": "adam", "lr": 0.01}})
check("cross-entropy, Adam", ["--data", classes, "--loss", "cross-entropy"] + base[2:] +
      ["--layers", "4,16,16,3", "--optim", "adam", "--lr", "0.01"], data_xy(classes),
      {"opt": {"kind": "adam", "lr": 0.01}, "ce": True})
for delta in (0, 1):
    with h5py.File(ode, "r") as f:
        pairs = int((f["stats/status"][()] == 0).sum()) * (f["t"].shape[0] - 1)
    check(f"hpc-odegen pairs, target {'delta' if delta else 'next'}, normalised",
          ["--data", ode, "--layers", "4,16,3", "--batch", str(pairs), "--val-fraction", "0", "--seed", "5",
           "--target", "delta" if delta else "next", "--optim", "adam", "--lr", "0.01"],
          data_ode(ode, delta), {"opt": {"kind": "adam", "lr": 0.01}})
sys.exit(1 if failures else 0)
