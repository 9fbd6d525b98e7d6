"""hpckit_torch - hpc-train's runs in PyTorch, and PyTorch models into hpc-train.

Installed as PREFIX/share/hpckit/python/hpckit_torch.py, which `module
load hpckit` puts on PYTHONPATH (else: export
PYTHONPATH=PREFIX/share/hpckit/python); needs torch, numpy and h5py:

    import hpckit_torch as hk

    model, norm, meta = hk.load("runs/t1")          # a run folder or a checkpoint
    y = norm.predict(model, x)                      # x, y in the data's units
    x_val, y_val = hk.samples(meta, "val")          # the run's validation split
    hk.save_init(model, "init.h5")                  # hpc-train --init-from init.h5
    hk.save_dataset(ds, "data.h5")                  # a TensorDataset -> hpc-train --data

See docs/train.md ("PyTorch both ways").  The checkpoint's layout is
PyTorch's: /model/<i>/weight [out, in] and /model/<i>/bias [out] are the
state_dict of nn.Sequential(Linear, act, Linear, act, ..., Linear), the
Linear layers at 0, 2, 4, ...
"""
import os
import re

import h5py
import numpy as np
import torch

__all__ = ["load", "save_init", "save_dataset", "build_model", "samples", "usable_trajectories",
           "load_optimizer_state", "Normaliser"]

ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "gelu": torch.nn.GELU}


def checkpoint_path(path):
    """A run folder's checkpoint.h5, or path itself."""
    return os.path.join(path, "checkpoint.h5") if os.path.isdir(path) else path


def _plain(v):
    """An HDF5 attribute as a Python value."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v


def build_model(layers, activation="tanh"):
    """nn.Sequential(Linear(l0, l1), act, ..., Linear(l[n-1], l[n])) as
    hpc-train's --layers and --act describe it."""
    act = ACTIVATIONS[activation]
    mods = []
    for i in range(len(layers) - 1):
        if i:
            mods.append(act())
        mods.append(torch.nn.Linear(int(layers[i]), int(layers[i + 1])))
    return torch.nn.Sequential(*mods)


class Normaliser:
    """The run's normalisation: the model sees (x - x_mean) / x_std and
    predicts (y - y_mean) / y_std (cross-entropy: labels, y_mean None)."""

    def __init__(self, x_mean, x_std, y_mean=None, y_std=None):
        self.x_mean, self.x_std, self.y_mean, self.y_std = x_mean, x_std, y_mean, y_std

    def inputs(self, x):
        """Raw inputs [N, in] as the float32 tensor the model takes."""
        return torch.from_numpy((np.asarray(x, dtype=np.float64) - self.x_mean) / self.x_std).float()

    def targets(self, y):
        """Raw targets as the model's: normalised float32 (MSE), int64 labels."""
        if self.y_mean is None:
            return torch.from_numpy(np.asarray(y).reshape(-1).astype(np.int64))
        return torch.from_numpy((np.asarray(y, dtype=np.float64) - self.y_mean) / self.y_std).float()

    def outputs(self, out):
        """The model's outputs in the data's units (numpy float64)."""
        o = out.detach().double().numpy()
        return o if self.y_mean is None else o * self.y_std + self.y_mean

    def predict(self, model, x):
        """model on raw inputs, in the data's units."""
        with torch.no_grad():
            return self.outputs(model(self.inputs(x)))


def load(path):
    """(model, normaliser, metadata) of a run folder or checkpoint file.

    metadata: the checkpoint's root attributes as plain values - step,
    epoch, layers, activation, loss, optimizer, lr, data, target ("Y",
    "next" or "delta"), train_samples, val_samples, val_from_row,
    train_loss and val_loss (over normalised targets), val_mse_data (in
    the data's units), normalized, init_from, options, the provenance -
    with "layers" as a list of ints and "checkpoint" the file read."""
    ck = checkpoint_path(path)
    with h5py.File(ck, "r") as f:
        meta = {k: _plain(v) for k, v in f.attrs.items()}
        meta["layers"] = [int(s) for s in str(meta["layers"]).split(",")]
        meta["checkpoint"] = ck
        model = build_model(meta["layers"], meta["activation"])
        model.load_state_dict({f"{i}.{k}": torch.from_numpy(f[f"model/{i}/{k}"][()])
                               for i in f["model"] for k in ("weight", "bias")})
        ce = "norm/y_mean" not in f
        norm = Normaliser(f["norm/x_mean"][()], f["norm/x_std"][()],
                          None if ce else f["norm/y_mean"][()], None if ce else f["norm/y_std"][()])
    return model, norm, meta


def save_init(model, path):
    """Write model's parameters as an init file for hpc-train --init-from:
    /model/<i>/weight and bias, float32, from its state_dict, and the
    activation as the root attribute "activation" (hpc-train refuses the
    file under another --act).  model is an nn.Sequential of Linear layers
    at 0, 2, 4, ... with one kind of activation between them (what
    --layers and --act describe)."""
    sd = model.state_dict()
    bad = [k for k in sd if not re.fullmatch(r"\d+\.(weight|bias)", k)]
    if bad:
        raise ValueError(f"not an nn.Sequential of Linear layers: state_dict keys {bad}")
    names = {name for name, cls in ACTIVATIONS.items() for m in model if type(m) is cls}
    others = [type(m).__name__ for m in model if not isinstance(m, torch.nn.Linear)
              and type(m) not in ACTIVATIONS.values()]
    if others or len(names) > 1:
        raise ValueError(f"the activations must be one of {sorted(ACTIVATIONS)} throughout: "
                         f"{sorted(names) + others}")
    tmp = path + ".partial"
    with h5py.File(tmp, "w") as f:
        for k, v in sd.items():
            f[f"model/{k.replace('.', '/')}"] = v.detach().cpu().float().numpy()
        if names:
            f.attrs["activation"] = names.pop()
    os.replace(tmp, path)


def save_dataset(data, path, labels=False, classes=0):
    """Write a TensorDataset (or a pair of tensors X, Y) as the /X,/Y file
    hpc-train --data reads (labels: Y holds class labels 0 .. classes-1,
    for --loss cross-entropy), through hpc-convert's writer (hpckit_data,
    installed beside this module): the same checks and attributes."""
    import hpckit_data
    x, y = data.tensors if isinstance(data, torch.utils.data.TensorDataset) else data
    hpckit_data.write_arrays(path, x.detach().cpu().numpy(), y.detach().cpu().numpy(), labels=labels,
                             classes=classes, attrs={"source": "hpckit_torch.save_dataset"})


def load_optimizer_state(path, model, optimizer):
    """Put the checkpoint's optimiser state into optimizer (torch.optim.Adam,
    AdamW or SGD over model.parameters(), in that order) so that PyTorch
    continues where hpc-train stopped: exp_avg and exp_avg_sq (Adam,
    AdamW) or momentum_buffer (SGD) per parameter, and Adam's step count.
    The learning rate and the other hyperparameters are the optimizer's
    own: give it the run's (metadata: lr, and the options string)."""
    with h5py.File(checkpoint_path(path), "r") as f:
        step = int(f.attrs["step"])
        names = list(f["optim"]) if "optim" in f else []
        for name, p in model.named_parameters():
            i, k = name.split(".")
            st = {n: torch.from_numpy(f[f"optim/{n}/{i}/{k}"][()]).clone() for n in names}
            if "exp_avg" in st:
                st["step"] = torch.tensor(float(step))
            if st:
                optimizer.state[p] = st


MISSING, NOT_COMPUTED = -127, -128   # hpc-odegen's statuses of rows that hold no result


def usable_trajectories(f, path):
    """The mask of an hpc-odegen file's trajectories with status 0 (the
    failed ones, status > 0 or -1, are left out, as hpc-train leaves them);
    ValueError if any row holds no result at all: a joined file whose
    shard is gone or incomplete reads as status -127 there (the shard is
    named), a file still being written as -128.  Missing is never failed."""
    status = f["stats/status"][()]
    gone = np.flatnonzero((status == MISSING) | (status == NOT_COMPUTED))
    if len(gone) == 0:
        return status == 0
    first = int(gone[0])
    where = ""
    dset = f["stats/status"]
    if dset.is_virtual:
        for m in dset.virtual_sources():
            lo, hi = m.vspace.get_select_bounds()
            if lo[0] <= first <= hi[0]:
                where = ": its rows %d..%d come from '%s', which is missing or incomplete" % (
                    lo[0], hi[0], m.file_name)
                break
    what = "hold no result (status %d)" % status[first]
    raise ValueError("%s: %d of its %d trajectories %s, from row %d%s (keep a joined file beside its shards)"
                     % (path, len(gone), len(status), what, first, where))


def samples(meta, split="val", data=None):
    """The run's samples of split ("train" or "val") in the data's units:
    (x [N, in], y [N, out] float64, or labels [N] int64), in hpc-train's
    sample order.  data: the data file (default: the one the run read).
    ValueError where an hpc-odegen file has rows without a result (a
    joined file missing a shard), as hpc-train refuses it."""
    data = data or meta["data"]
    lo_row = int(meta["val_from_row"])
    with h5py.File(data, "r") as f:
        if meta["target"] == "Y":
            x, y = f["X"][()], f["Y"][()]
            sel = slice(lo_row, None) if split == "val" else slice(0, lo_row)
            x, y = x[sel].astype(np.float64), y[sel]
            return x, (y.reshape(-1).astype(np.int64) if y.dtype.kind in "iu" else y.astype(np.float64))
        good = usable_trajectories(f, data)
        traj, t = f["y"][()], f["t"][()]
    rows = np.arange(len(good))
    keep = good & ((rows >= lo_row) if split == "val" else (rows < lo_row))
    traj = traj[keep]
    n, nt, d = traj.shape
    x = np.concatenate([traj[:, :-1, :], np.broadcast_to(t[:-1, None], (n, nt - 1, 1))], axis=2)
    y = traj[:, 1:, :] - traj[:, :-1, :] if meta["target"] == "delta" else traj[:, 1:, :]
    return x.reshape(-1, d + 1), y.reshape(-1, d)
